//! The CTC beam search against pyctcdecode (pinned in `tools/pypi.sh decoders`, with KenLM's Python module) on
//! the same logits: the committed logits of the CTC fixture, and emissions made here from Swahili sentences with
//! names, places and products in them, some letters made to look like their neighbours (s/z, l/r, b/p…), so
//! that greedy decoding misspells them. Each is decoded plain, with hotwords, with a trigram model (an ARPA file
//! written here from a small corpus) and with both; the best beam's text, its words' frames and its scores must
//! be pyctcdecode's. The hotwords and the model must also repair misspellings the plain search keeps.

use std::path::{Path, PathBuf};

use crate::common;
use sauti::asr::ctc::align::Vocabulary;
use sauti::asr::ctc::beam::{Decoded, Hotwords, Search, SearchOptions};
use sauti::asr::ctc::lm::{LanguageModel, Weights};

const SENTENCES: [&str; 10] = [
    "nimetuma pesa kwa mpesa jana jioni",
    "tawi la kariakoo hufunguliwa saa mbili",
    "mteja wa equity anauliza salio lake",
    "daktari njoroge yupo zahanati ya mwanza",
    "kadi yangu ya crdb imezuiliwa",
    "nipigie kesho asubuhi tafadhali",
    "bei ya luku imepanda tena",
    "ujumbe wa otp haujafika bado",
    "ofisi iko barabara ya nyerere karibu na posta",
    "nataka kulipa ada ya shule ya bibi zawadi",
];

/// Letters a noisy acoustic model confuses.
const CONFUSED: [(char, char); 9] = [
    ('s', 'z'),
    ('l', 'r'),
    ('b', 'p'),
    ('d', 't'),
    ('k', 'g'),
    ('e', 'i'),
    ('o', 'u'),
    ('m', 'n'),
    ('f', 'v'),
];

/// A small deterministic generator (xorshift64*), so every run decodes the same emissions.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn normal(&mut self) -> f32 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    }
}

fn vocabulary() -> Vocabulary {
    let text = std::fs::read_to_string(common::fixture("ctc/model/vocab.json")).unwrap();
    let ids: std::collections::BTreeMap<String, u32> = serde_json::from_str(&text).unwrap();
    let mut tokens = vec![String::new(); ids.len()];
    for (token, &id) in &ids {
        tokens[id as usize] = token.clone();
    }
    Vocabulary {
        blank: ids["[PAD]"],
        delimiter: Some(ids["|"]),
        unknown: Some(ids["[UNK]"]),
        tokens,
    }
}

/// Emissions for `sentence`: each letter held for one to three frames, blanks between, the delimiter between
/// words, noise everywhere, and about one letter in six made slightly likelier as its confusable neighbour.
fn emissions(sentence: &str, vocabulary: &Vocabulary, random: &mut Random) -> Vec<f32> {
    let width = vocabulary.tokens.len();
    let id = |c: char| {
        vocabulary
            .tokens
            .iter()
            .position(|t| t.chars().eq([c]))
            .unwrap()
    };
    let mut frames: Vec<Vec<f32>> = Vec::new();
    let mut frame = |random: &mut Random, peaks: &[(usize, f32)]| {
        let mut row: Vec<f32> = (0..width).map(|_| random.normal()).collect();
        row[vocabulary.blank as usize] += 1.0;
        for &(token, value) in peaks {
            row[token] = value + random.normal() * 0.2;
        }
        frames.push(row);
    };
    let mut previous = None;
    for c in sentence.chars() {
        let token = match c {
            ' ' => vocabulary.delimiter.unwrap() as usize,
            c => id(c),
        };
        let blanks = random.below(3) + usize::from(previous == Some(token));
        for _ in 0..blanks {
            frame(random, &[(vocabulary.blank as usize, 6.0)]);
        }
        let confused = CONFUSED
            .iter()
            .find_map(|&(a, b)| (c == a).then_some(b).or((c == b).then_some(a)))
            .filter(|_| random.below(6) == 0);
        for _ in 0..1 + random.below(3) {
            match confused {
                Some(other) => frame(random, &[(token, 5.6), (id(other), 6.0)]),
                None => frame(random, &[(token, 6.5)]),
            }
        }
        previous = Some(token);
    }
    frame(random, &[(vocabulary.blank as usize, 6.0)]);
    frames.concat()
}

/// A trigram ARPA file from `corpus`, in KenLM's layout (tab-separated, every context present): discounted
/// relative frequencies and back-offs that grow with how many words a context has been followed by.
fn arpa(corpus: &[&str]) -> String {
    use std::collections::BTreeMap;
    let mut counts: Vec<BTreeMap<Vec<String>, usize>> = vec![BTreeMap::new(); 3];
    for sentence in corpus {
        let words: Vec<String> = std::iter::once("<s>")
            .chain(sentence.split_whitespace())
            .chain(std::iter::once("</s>"))
            .map(String::from)
            .collect();
        for n in 1..=3 {
            for gram in words.windows(n) {
                *counts[n - 1].entry(gram.to_vec()).or_default() += 1;
            }
        }
    }
    let total: usize = counts[0].values().sum();
    let followers = |gram: &[String]| {
        counts.get(gram.len()).map_or(0, |next| {
            next.keys().filter(|k| k.starts_with(gram)).count()
        })
    };
    let mut out = String::from("\\data\\\n");
    out += &format!("ngram 1={}\n", counts[0].len() + 1);
    for n in 2..=3 {
        out += &format!("ngram {n}={}\n", counts[n - 1].len());
    }
    for n in 1..=3 {
        out += &format!("\n\\{n}-grams:\n");
        if n == 1 {
            out += "-2.5\t<unk>\t0\n";
        }
        for (gram, &count) in &counts[n - 1] {
            let context = match n {
                1 => total,
                _ => counts[n - 2][&gram[..n - 1]],
            };
            let probability = match gram[0].as_str() {
                "<s>" if n == 1 => -99.0,
                _ => (0.8 * count as f64 / context as f64).log10(),
            };
            let text = gram.join(" ");
            match (n, gram.last().map(String::as_str)) {
                (3, _) | (_, Some("</s>")) => out += &format!("{probability:.6}\t{text}\n"),
                _ => {
                    let backoff = -(0.1 + 0.05 * followers(gram) as f64);
                    out += &format!("{probability:.6}\t{text}\t{backoff:.6}\n");
                }
            }
        }
    }
    out + "\n\\end\\\n"
}

struct Case {
    name: String,
    logits: Vec<f32>,
    hotwords: Vec<String>,
    lm: bool,
    /// The sentence the emissions were made from (none for the fixture's logits).
    said: Option<&'static str>,
}

#[derive(Debug, serde::Deserialize)]
struct Reference {
    text: String,
    words: Vec<(String, usize, usize)>,
    logit_score: f64,
    score: f64,
}

fn floats(path: &Path) -> Vec<f32> {
    common::floats(path)
}

fn cases(vocabulary: &Vocabulary) -> Vec<Case> {
    let mut cases = Vec::new();
    for (file, seed) in [
        ("speech-logits.f32", 3u64),
        ("tones-logits.f32", 5),
        ("mix-logits.f32", 7),
    ] {
        let logits = floats(&common::fixture("ctc").join(file));
        let plain = decode(vocabulary, &logits, &Hotwords::default(), None);
        // Near-misses of the words the plain search finds: a letter changed in each.
        let mut random = Random(seed);
        let near: Vec<String> = plain
            .words
            .iter()
            .map(|w| {
                let mut chars: Vec<char> = w.text.chars().collect();
                let at = random.below(chars.len());
                chars[at] = ['a', 'e', 'i', 'o', 'u'][random.below(5)];
                chars.into_iter().collect()
            })
            .collect();
        for (hotwords, lm) in [(vec![], false), (near, false)] {
            cases.push(Case {
                name: format!("{file} with {} hotwords", hotwords.len()),
                logits: logits.clone(),
                hotwords,
                lm,
                said: None,
            });
        }
    }
    for seed in 1..=3u64 {
        let mut random = Random(0x9E37_79B9_7F4A_7C15 ^ seed);
        for sentence in SENTENCES {
            let logits = emissions(sentence, vocabulary, &mut random);
            let words: Vec<&str> = sentence.split(' ').collect();
            let mut hotwords: Vec<String> = (0..2)
                .map(|_| words[random.below(words.len())].to_string())
                .collect();
            let other = SENTENCES[random.below(SENTENCES.len())];
            hotwords.push(other.split(' ').next().unwrap().to_string());
            for (hotwords, lm) in [
                (vec![], false),
                (hotwords.clone(), false),
                (vec![], true),
                (hotwords, true),
            ] {
                cases.push(Case {
                    name: format!("{sentence:?} seed {seed} hotwords {hotwords:?} lm {lm}"),
                    logits: logits.clone(),
                    hotwords,
                    lm,
                    said: Some(sentence),
                });
            }
        }
    }
    cases
}

fn decode(
    vocabulary: &Vocabulary,
    logits: &[f32],
    hotwords: &Hotwords,
    lm: Option<&LanguageModel>,
) -> Decoded {
    Search::new(vocabulary, hotwords, lm, SearchOptions::default())
        .decode(logits, vocabulary.tokens.len())
}

fn text(decoded: &Decoded) -> String {
    decoded
        .words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn beam_search_is_pyctcdecodes_with_hotwords_and_a_language_model() {
    let vocabulary = vocabulary();
    let dir = tempfile::tempdir().unwrap();
    let arpa_path: PathBuf = dir.path().join("swahili-3gram.arpa");
    std::fs::write(&arpa_path, arpa(&SENTENCES)).unwrap();
    let lm = LanguageModel::load(&arpa_path, Weights::default()).unwrap();
    assert_eq!(lm.order(), 3);
    let cases = cases(&vocabulary);
    let spec_cases: Vec<serde_json::Value> = cases
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let path = dir.path().join(format!("case-{i}.f32"));
            let bytes: Vec<u8> = case.logits.iter().flat_map(|f| f.to_le_bytes()).collect();
            std::fs::write(&path, bytes).unwrap();
            serde_json::json!({
                "logits": path,
                "hotwords": case.hotwords,
                "lm": case.lm.then_some(&arpa_path),
            })
        })
        .collect();
    let spec = dir.path().join("spec.json");
    std::fs::write(
        &spec,
        serde_json::json!({"labels": vocabulary.tokens, "cases": spec_cases}).to_string(),
    )
    .unwrap();
    let output = common::sdk::run_decoders("ctc_decode.py", &[spec.to_str().unwrap()]);
    let json_start = output.find('[').expect("the decoder prints JSON");
    let references: Vec<Reference> =
        serde_json::from_str(output[json_start..].lines().next().unwrap()).unwrap();
    assert_eq!(references.len(), cases.len());

    let (mut repaired_by_hotwords, mut repaired_by_lm) = (0, 0);
    for (case, reference) in cases.iter().zip(&references) {
        let hotwords = Hotwords::new(&case.hotwords, 10.0);
        let ours = decode(&vocabulary, &case.logits, &hotwords, case.lm.then_some(&lm));
        let name = &case.name;
        assert_eq!(
            text(&ours),
            reference.text.replace('\u{2047}', ""),
            "{name}"
        );
        let frames: Vec<(String, usize, usize)> = ours
            .words
            .iter()
            .map(|w| (w.text.clone(), w.start, w.end))
            .collect();
        if !reference.text.contains('\u{2047}') {
            assert_eq!(frames, reference.words, "{name}");
        }
        assert!(
            (ours.logit_score - reference.logit_score).abs() < 1e-3,
            "{name}: {} vs {}",
            ours.logit_score,
            reference.logit_score
        );
        assert!(
            (ours.score - reference.score).abs() < 1e-3,
            "{name}: {} vs {}",
            ours.score,
            reference.score
        );
        if let Some(said) = case.said {
            let plain = text(&decode(
                &vocabulary,
                &case.logits,
                &Hotwords::default(),
                None,
            ));
            let right = |t: &str| {
                t.split(' ')
                    .zip(said.split(' '))
                    .filter(|(a, b)| a == b)
                    .count()
            };
            if right(&text(&ours)) > right(&plain) {
                match case.lm {
                    true => repaired_by_lm += 1,
                    false => repaired_by_hotwords += 1,
                }
            }
        }
    }
    assert!(repaired_by_hotwords > 0, "no hotword repaired a word");
    assert!(repaired_by_lm > 0, "the language model repaired no word");
}
