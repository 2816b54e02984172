//! Measuring recognition on an operator's own recordings (`sauti stt eval MANIFEST`): manifests in the layouts of
//! Common Voice and FLEURS test sets or a plain `audio<TAB>text` list, one text normalisation for references and
//! hypotheses alike, and word and character error rates.

use std::path::{Path, PathBuf};

/// One recording and what was said in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The audio file.
    pub audio: PathBuf,
    /// The reference transcript.
    pub reference: String,
}

/// Read a manifest. Three layouts, told apart by their first line:
///
/// - Common Voice (`test.tsv`): a header naming `path` and `sentence`; the audio in `clips/` beside the file.
/// - FLEURS (`test.tsv`): no header, tab-separated `id, file name, raw transcription, …`; the audio in
///   `audio/<manifest name>/` beside the file (`audio/test/` for `test.tsv`), else beside the file.
/// - Plain: a header `audio<TAB>text`; audio paths relative to the manifest.
///
/// Blank lines and lines starting with `#` are skipped.
pub fn read_manifest(path: &Path) -> Result<Vec<Item>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let Some((_, first)) = lines.next() else {
        return Err(format!("{} lists no recordings", path.display()));
    };
    let header: Vec<&str> = first.split('\t').map(str::trim).collect();
    let column = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
    let (audio_column, text_column, folder, rows): (usize, usize, PathBuf, Vec<(usize, &str)>) =
        match (column("path"), column("sentence"), column("audio"), column("text")) {
            (Some(a), Some(t), _, _) => (a, t, base.join("clips"), lines.collect()),
            (_, _, Some(a), Some(t)) => (a, t, base.to_path_buf(), lines.collect()),
            _ if header.len() >= 3 => {
                let stem = path.file_stem().unwrap_or_default();
                let split = base.join("audio").join(stem);
                let folder = if split.is_dir() { split } else { base.to_path_buf() };
                let mut rows = vec![(0, first)];
                rows.extend(lines);
                (1, 2, folder, rows)
            }
            _ => {
                return Err(format!(
                    "{}: the first line is neither a Common Voice header (path, sentence), a plain one (audio, \
                     text) nor a FLEURS row (id, file name, transcription)",
                    path.display()
                ))
            }
        };
    rows.into_iter()
        .map(|(number, line)| {
            let fields: Vec<&str> = line.split('\t').collect();
            match (fields.get(audio_column), fields.get(text_column)) {
                (Some(audio), Some(reference)) if !audio.trim().is_empty() => Ok(Item {
                    audio: folder.join(audio.trim()),
                    reference: reference.trim().to_string(),
                }),
                _ => Err(format!(
                    "{} line {}: no audio file or transcript",
                    path.display(),
                    number + 1
                )),
            }
        })
        .collect()
}

/// The text both sides are compared in: lower case (so capitals are not spelt out as letter names), numbers,
/// dates, units and symbols read out as words by sauti's own normaliser, punctuation dropped (apostrophes inside
/// words kept: `ng'ombe`), spaces collapsed.
pub fn comparable(text: &str) -> String {
    let spoken = crate::tts::normalize::normalize(&text.to_lowercase()).to_lowercase();
    let mut out = String::with_capacity(spoken.len());
    let characters: Vec<char> = spoken.chars().collect();
    for (i, &c) in characters.iter().enumerate() {
        let inside_word = |j: Option<usize>| {
            j.and_then(|j| characters.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let keep = c.is_alphanumeric()
            || (matches!(c, '\'' | '’')
                && inside_word(i.checked_sub(1))
                && inside_word(Some(i + 1)));
        out.push(match (keep, c) {
            (true, '’') => '\'',
            (true, c) => c,
            (false, _) => ' ',
        });
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Edits (substitutions, insertions, deletions) turning `reference` into `hypothesis`.
pub fn edit_distance<T: PartialEq>(reference: &[T], hypothesis: &[T]) -> usize {
    let mut row: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, h) in hypothesis.iter().enumerate() {
            let substitution = diagonal + usize::from(r != h);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[hypothesis.len()]
}

/// Errors and reference length, in words and in characters (spaces between words included), of one pair of
/// comparable texts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Errors {
    /// Word edits.
    pub word_edits: usize,
    /// Words in the reference.
    pub words: usize,
    /// Character edits.
    pub char_edits: usize,
    /// Characters in the reference.
    pub chars: usize,
}

impl Errors {
    /// The errors of `hypothesis` against `reference` (both already [`comparable`]).
    pub fn of(reference: &str, hypothesis: &str) -> Self {
        let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let chars = |t: &str| t.chars().collect::<Vec<_>>();
        Self {
            word_edits: edit_distance(&words(reference), &words(hypothesis)),
            words: words(reference).len(),
            char_edits: edit_distance(&chars(reference), &chars(hypothesis)),
            chars: chars(reference).len(),
        }
    }

    /// Word error rate (edits per reference word; 0 for an empty reference matched by an empty hypothesis).
    pub fn wer(&self) -> f64 {
        rate(self.word_edits, self.words)
    }

    /// Character error rate.
    pub fn cer(&self) -> f64 {
        rate(self.char_edits, self.chars)
    }
}

/// Corpus rates are total edits over total reference length: counts add up.
impl std::ops::Add for Errors {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            word_edits: self.word_edits + other.word_edits,
            words: self.words + other.words,
            char_edits: self.char_edits + other.char_edits,
            chars: self.chars + other.chars,
        }
    }
}

fn rate(edits: usize, length: usize) -> f64 {
    match (edits, length) {
        (0, _) => 0.0,
        (_, 0) => 1.0,
        (edits, length) => edits as f64 / length as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_hypotheses_meet_in_one_spoken_form() {
        assert_eq!(
            comparable("Nina shilingi 250, sawa?"),
            "nina shilingi mia mbili na hamsini sawa"
        );
        assert_eq!(comparable("NG’OMBE  wa 'Mama'!"), "ng'ombe wa mama");
        assert_eq!(comparable(""), "");
    }

    #[test]
    fn error_rates_count_edits_over_the_reference() {
        let errors = Errors::of("habari za asubuhi", "habari ya asubuhi sana");
        assert_eq!((errors.word_edits, errors.words), (2, 3));
        assert!((errors.wer() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(edit_distance(&['a', 'b', 'c'], &['a', 'c']), 1);
        assert_eq!(Errors::of("", "").wer(), 0.0);
        assert_eq!(Errors::of("", "kitu").wer(), 1.0);
        let total = Errors::of("a b", "a b") + Errors::of("c d", "c x");
        assert_eq!((total.word_edits, total.words), (1, 4));
    }

    #[test]
    fn the_three_manifest_layouts_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let common_voice = write(
            "test.tsv",
            "client_id\tpath\tsentence\tup_votes\nabc\tcommon_voice_sw_1.mp3\tHabari yako?\t2\n",
        );
        assert_eq!(
            read_manifest(&common_voice).unwrap(),
            [Item {
                audio: dir.path().join("clips/common_voice_sw_1.mp3"),
                reference: "Habari yako?".into()
            }]
        );
        let plain = write(
            "mine.tsv",
            "# my clinic's calls\naudio\ttext\n\ncalls/1.wav\tNina homa\n",
        );
        assert_eq!(
            read_manifest(&plain).unwrap()[0].audio,
            dir.path().join("calls/1.wav")
        );
        std::fs::create_dir_all(dir.path().join("audio/dev")).unwrap();
        let fleurs = write(
            "dev.tsv",
            "1832\t9876.wav\tSalamu, rafiki.\tsalamu rafiki\ts a l a m u\t160000\tFEMALE\n",
        );
        let items = read_manifest(&fleurs).unwrap();
        assert_eq!(items[0].audio, dir.path().join("audio/dev/9876.wav"));
        assert_eq!(items[0].reference, "Salamu, rafiki.");
        let broken = write("broken.tsv", "only one column\n");
        assert!(read_manifest(&broken).unwrap_err().contains("first line"));
    }
}
