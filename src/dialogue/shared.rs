//! A language file in use (the reading, the safety rules): one copy shared by every scenario of a library, and
//! swapped as a whole when its file is reloaded, so a turn sees either the old rules or the new, never a mix.

use std::sync::{Arc, RwLock};

/// A language file compiled into sauti, used when the scenarios folder has no copy of its own.
pub trait BuiltIn: Sized {
    /// The built-in copy.
    fn built_in() -> Arc<Self>;
}

/// The copy of `T` in use, shared by every scenario of a library and swapped when its file is reloaded.
#[derive(Debug)]
pub struct Shared<T>(Arc<RwLock<Arc<T>>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: BuiltIn> Default for Shared<T> {
    fn default() -> Self {
        Self::new(T::built_in())
    }
}

impl<T> Shared<T> {
    /// A cell holding `value`.
    pub fn new(value: Arc<T>) -> Self {
        Self(Arc::new(RwLock::new(value)))
    }

    /// The copy in use now.
    pub fn current(&self) -> Arc<T> {
        Arc::clone(&self.0.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Put `value` in use.
    pub fn replace(&self, value: Arc<T>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = value;
    }
}
