//! libFuzzer's `-malloc_limit_mb` (by default the `-rss_limit_mb` value) for builds without a sanitizer.
//!
//! libFuzzer sees single allocations only through a sanitizer's malloc hooks; tools/fuzz.sh builds the targets
//! without one (`-s none`), where only memory actually touched would count against `-rss_limit_mb`. An upload
//! that makes a parser allocate gigabytes it never fills (a header claiming a 2 GB tag) would pass unnoticed.
//! This allocator puts the limit on every allocation: one of the limit or more prints libFuzzer's out-of-memory
//! line and aborts, which libFuzzer reports as a crash and saves the input for. With AddressSanitizer (cargo
//! fuzz's default) its own hook applies the same limit; this check then changes nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Limited;

#[global_allocator]
static ALLOCATOR: Limited = Limited;

/// 0: the command line not read yet; 1: being read; otherwise the limit in MB plus 2 (2: no limit).
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// The limit in MB, as libFuzzer takes it: `-malloc_limit_mb`, or `-rss_limit_mb` (default 2048) when that is
/// absent or 0; 0 means none.
fn limit_mb() -> Option<usize> {
    match LIMIT.load(Ordering::Relaxed) {
        0 => {
            if LIMIT
                .compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                return None;
            }
            let (mut rss, mut malloc) = (2048, 0);
            for arg in std::env::args_os() {
                let Some(arg) = arg.to_str() else { continue };
                if let Some(value) = arg.strip_prefix("-rss_limit_mb=") {
                    rss = value.parse().unwrap_or(rss);
                } else if let Some(value) = arg.strip_prefix("-malloc_limit_mb=") {
                    malloc = value.parse().unwrap_or(malloc);
                }
            }
            let mb = if malloc > 0 { malloc } else { rss };
            LIMIT.store(mb + 2, Ordering::Relaxed);
            (mb > 0).then_some(mb)
        }
        1 => None,
        n => (n > 2).then(|| n - 2),
    }
}

fn check(size: usize) {
    // Reading the command line allocates only small strings, so it never comes back here.
    if size >> 20 == 0 {
        return;
    }
    if let Some(mb) = limit_mb() {
        if size >> 20 >= mb {
            eprintln!(
                "=={}== ERROR: libFuzzer: out-of-memory (malloc({size}))",
                std::process::id()
            );
            std::process::abort();
        }
    }
}

unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}
