//! W3C Pronunciation Lexicon Specification 1.0 files: `<lexicon alphabet="ipa">` holding `<lexeme>`s of one or
//! more `<grapheme>`s and a pronunciation, an `<alias>` or a `<phoneme>` (the first one given is used). Each
//! grapheme becomes one rule. Every problem is reported with the line it is on.

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::lines::Lines;
use super::{check_rule, Rule, RuleError, MAX_RULES};

/// The PLS namespace.
const NAMESPACE: &str = "http://www.w3.org/2005/01/pronunciation-lexicon";

fn at_line(line: usize, problem: impl Into<String>) -> RuleError {
    RuleError::Invalid {
        at: format!("line {line}"),
        problem: problem.into(),
    }
}

/// An attribute's value by local name (namespace prefixes ignored).
fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.as_ref() == name || a.key.local_name().as_ref() == name)
        .and_then(|a| {
            a.normalized_value(XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

fn local_name(element: &BytesStart<'_>) -> String {
    element.local_name().as_ref().to_string()
}

/// What is being read.
#[derive(Default)]
struct Lexeme {
    line: usize,
    graphemes: Vec<String>,
    /// The first pronunciation: (is it a phoneme, text, alphabet, line).
    pronunciation: Option<(bool, String, String, usize)>,
}

/// The element whose text is being collected.
struct Open {
    name: String,
    line: usize,
    alphabet: String,
    text: String,
}

/// Read a PLS document into rules, each checked.
pub fn parse(text: &str) -> Result<Vec<Rule>, RuleError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader::from_str(text);
    let mut alphabet: Option<String> = None;
    let mut depth = 0usize;
    let mut skipping: Option<usize> = None;
    let mut lexeme: Option<Lexeme> = None;
    let mut open: Option<Open> = None;
    let mut rules = Vec::new();
    let mut lines = Lines::new(text);
    loop {
        let start = reader.buffer_position();
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(e) => {
                return Err(at_line(
                    lines.at(reader.error_position()),
                    format!("the file is not well-formed XML: {e}"),
                ))
            }
        };
        let line = lines.at(start);
        match event {
            Event::Start(element) => {
                depth += 1;
                if skipping.is_some() {
                    continue;
                }
                let name = local_name(&element);
                match (depth, name.as_str()) {
                    (1, "lexicon") => {
                        alphabet = Some(lexicon_alphabet(&element, line)?);
                    }
                    (1, other) => {
                        return Err(at_line(
                            line,
                            format!("the root element is <{other}>, not a PLS <lexicon>"),
                        ));
                    }
                    (2, "lexeme") => {
                        lexeme = Some(Lexeme {
                            line,
                            ..Lexeme::default()
                        })
                    }
                    (2, "meta" | "metadata") | (3, "example") => skipping = Some(depth),
                    (3, "grapheme" | "phoneme" | "alias") => {
                        let own = attribute(&element, "alphabet");
                        open = Some(Open {
                            name,
                            line,
                            alphabet: own.or_else(|| alphabet.clone()).unwrap_or_default(),
                            text: String::new(),
                        });
                    }
                    (_, other) => {
                        return Err(at_line(line, format!("unexpected element <{other}>")));
                    }
                }
            }
            Event::Empty(element) => {
                if skipping.is_some() {
                    continue;
                }
                let name = local_name(&element);
                match (depth + 1, name.as_str()) {
                    (1, "lexicon") => return Err(RuleError::Empty),
                    (2, "meta" | "metadata") | (3, "example") => {}
                    (3, "grapheme" | "phoneme" | "alias") => {
                        return Err(at_line(line, format!("<{name}> is empty")));
                    }
                    (_, other) => {
                        return Err(at_line(line, format!("unexpected element <{other}>")));
                    }
                }
            }
            Event::End(_) => {
                if let Some(level) = skipping {
                    if level == depth {
                        skipping = None;
                    }
                } else {
                    match depth {
                        3 => close_part(open.take(), lexeme.as_mut())?,
                        2 => {
                            if let Some(done) = lexeme.take() {
                                finish(done, &mut rules)?;
                            }
                            // Refused as soon as the file holds more rules than a dictionary may.
                            if rules.len() > MAX_RULES {
                                return Err(at_line(
                                    line,
                                    format!("the file holds more than {MAX_RULES} rules (one per <grapheme>); at most {MAX_RULES} are allowed"),
                                ));
                            }
                        }
                        _ => {}
                    }
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(content) => {
                if let Some(open) = open.as_mut() {
                    open.text.push_str(&content.xml10_content());
                } else if skipping.is_none() && !content.xml10_content().trim().is_empty() {
                    return Err(at_line(
                        line,
                        "text outside a <grapheme>, <phoneme> or <alias>",
                    ));
                }
            }
            Event::CData(content) => {
                if let Some(open) = open.as_mut() {
                    open.text.push_str(&content.xml10_content());
                }
            }
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    Ok(None) => quick_xml::escape::resolve_predefined_entity(&reference)
                        .map(str::to_string)
                        .ok_or_else(|| {
                            at_line(line, format!("unknown entity &{};", &*reference))
                        })?,
                    Err(e) => return Err(at_line(line, e.to_string())),
                };
                if let Some(open) = open.as_mut() {
                    open.text.push_str(&resolved);
                }
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if alphabet.is_none() {
        return Err(RuleError::Syntax(
            "the file is not a PLS lexicon: it has no <lexicon> element".into(),
        ));
    }
    if rules.is_empty() {
        return Err(RuleError::Empty);
    }
    Ok(rules)
}

/// The `alphabet` of the root `<lexicon>` (IPA when not given), refusing any other.
fn lexicon_alphabet(element: &BytesStart<'_>, line: usize) -> Result<String, RuleError> {
    if let Some(namespace) = attribute(element, "xmlns") {
        if namespace != NAMESPACE {
            return Err(at_line(
                line,
                format!("the namespace {namespace:?} is not PLS ({NAMESPACE})"),
            ));
        }
    }
    let alphabet = attribute(element, "alphabet").unwrap_or_else(|| "ipa".into());
    Ok(alphabet)
}

/// A `<grapheme>`, `<phoneme>` or `<alias>` closed: keep its text in the lexeme.
fn close_part(open: Option<Open>, lexeme: Option<&mut Lexeme>) -> Result<(), RuleError> {
    let (Some(open), Some(lexeme)) = (open, lexeme) else {
        return Ok(());
    };
    let text = open.text.trim().to_string();
    if text.is_empty() {
        return Err(at_line(open.line, format!("<{}> is empty", open.name)));
    }
    match open.name.as_str() {
        "grapheme" => lexeme.graphemes.push(text),
        name => {
            if lexeme.pronunciation.is_none() {
                lexeme.pronunciation = Some((name == "phoneme", text, open.alphabet, open.line));
            }
        }
    }
    Ok(())
}

/// A `<lexeme>` closed: one rule per grapheme, each checked, problems named by line.
fn finish(lexeme: Lexeme, rules: &mut Vec<Rule>) -> Result<(), RuleError> {
    let Some(first) = lexeme.graphemes.first() else {
        return Err(at_line(lexeme.line, "a <lexeme> without a <grapheme>"));
    };
    let Some((is_phoneme, reading, alphabet, line)) = lexeme.pronunciation else {
        return Err(at_line(
            lexeme.line,
            format!("lexeme {first:?} has no <phoneme> or <alias>"),
        ));
    };
    for grapheme in &lexeme.graphemes {
        let rule = if is_phoneme {
            Rule::Phoneme {
                string_to_replace: grapheme.clone(),
                phoneme: reading.clone(),
                alphabet: alphabet.clone(),
            }
        } else {
            Rule::alias(grapheme, &reading)
        };
        check_rule(&rule)
            .map_err(|problem| at_line(line, format!("lexeme {grapheme:?}: {problem}")))?;
        rules.push(rule);
    }
    Ok(())
}

/// Write rules as a PLS document (IPA), one lexeme per rule.
pub fn write(rules: &[Rule]) -> String {
    use quick_xml::escape::escape;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<lexicon version=\"1.0\" xmlns=\"{NAMESPACE}\" alphabet=\"ipa\" xml:lang=\"sw\">\n"
    ));
    for rule in rules {
        out.push_str("  <lexeme>\n");
        out.push_str(&format!(
            "    <grapheme>{}</grapheme>\n",
            escape(rule.string_to_replace())
        ));
        match rule {
            Rule::Alias { alias, .. } => {
                out.push_str(&format!("    <alias>{}</alias>\n", escape(alias.as_str())));
            }
            Rule::Phoneme { phoneme, .. } => {
                out.push_str(&format!(
                    "    <phoneme>{}</phoneme>\n",
                    escape(phoneme.as_str())
                ));
            }
        }
        out.push_str("  </lexeme>\n");
    }
    out.push_str("</lexicon>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon"
      alphabet="ipa" xml:lang="sw">
  <meta name="author" content="sauti"/>
  <lexeme>
    <grapheme>M-Pesa</grapheme>
    <grapheme>MPESA</grapheme>
    <alias>em pesa</alias>
  </lexeme>
  <lexeme>
    <grapheme>Nairobi</grapheme>
    <phoneme>nai.ˈrɔ.bi</phoneme>
    <alias>nairobi</alias>
    <example>Nimefika Nairobi.</example>
  </lexeme>
  <lexeme>
    <grapheme>AT&amp;T</grapheme>
    <alias><![CDATA[ei ti]]> &#101;n ti</alias>
  </lexeme>
</lexicon>
"#;

    #[test]
    fn a_pls_lexicon_becomes_rules() {
        let rules = parse(GOOD).expect("valid PLS");
        assert_eq!(
            rules,
            vec![
                Rule::alias("M-Pesa", "em pesa"),
                Rule::alias("MPESA", "em pesa"),
                Rule::phoneme("Nairobi", "nai.ˈrɔ.bi"),
                Rule::alias("AT&T", "ei ti en ti"),
            ]
        );
        // What is written reads back the same.
        assert_eq!(parse(&write(&rules)).unwrap(), rules);
    }

    #[test]
    fn problems_name_their_line() {
        let bad_symbol = GOOD.replace("nai.ˈrɔ.bi", "naiʁobi");
        let err = parse(&bad_symbol).unwrap_err().to_string();
        assert!(
            err.starts_with("line 12:") && err.contains("\"ʁ\""),
            "{err}"
        );

        let unclosed = GOOD.replace(
            "</alias>\n  </lexeme>\n  <lexeme>\n    <grapheme>Nairobi",
            "\n  </lexeme>\n  <lexeme>\n    <grapheme>Nairobi",
        );
        let err = parse(&unclosed).unwrap_err().to_string();
        assert!(err.starts_with("line "), "{err}");
        assert!(err.contains("well-formed"), "{err}");

        let stray = GOOD
            .replace("<example>", "<exemple>")
            .replace("</example>", "</exemple>");
        assert_eq!(
            parse(&stray).unwrap_err().to_string(),
            "line 14: unexpected element <exemple>"
        );
        let no_pronunciation = GOOD.replace("<alias>em pesa</alias>", "");
        assert!(parse(&no_pronunciation)
            .unwrap_err()
            .to_string()
            .starts_with("line 5: lexeme \"M-Pesa\" has no"));
        let cmu = GOOD.replace("alphabet=\"ipa\"", "alphabet=\"x-sampa\"");
        assert!(parse(&cmu).unwrap_err().to_string().contains("x-sampa"));
        assert!(parse("{\"rules\": []}").is_err());
        assert!(matches!(
            parse("<lexicon xmlns=\"http://www.w3.org/2005/01/pronunciation-lexicon\" alphabet=\"ipa\"></lexicon>"),
            Err(RuleError::Empty)
        ));
    }

    /// A file of `lexemes` one-grapheme lexemes, one element a line.
    fn many(lexemes: usize) -> String {
        let mut text = String::from(
            "<?xml version=\"1.0\"?>\n<lexicon xmlns=\"http://www.w3.org/2005/01/pronunciation-lexicon\" alphabet=\"ipa\">\n",
        );
        for i in 0..lexemes {
            text.push_str(&format!(
                "<lexeme>\n<grapheme>neno{i}</grapheme>\n<alias>neno</alias>\n</lexeme>\n"
            ));
        }
        text + "</lexicon>\n"
    }

    #[test]
    fn problems_deep_in_a_file_name_their_own_line() {
        // A problem in the 900th lexeme (lines 3 + 4 × 899 onwards) is named by its own line.
        let text = many(1_000);
        let bad = text.replacen(
            "<grapheme>neno899</grapheme>\n<alias>neno</alias>",
            "<grapheme>neno899</grapheme>\n<phoneme>naiQ</phoneme>",
            1,
        );
        let error = parse(&bad).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("line {}:", 3 + 4 * 899 + 2)),
            "{error}"
        );
        assert_eq!(parse(&text).unwrap().len(), 1_000);
    }

    #[test]
    fn a_file_over_the_rule_cap_is_refused_where_it_goes_over_and_quickly() {
        // About 1 MB: 19,000 lexemes.
        let text = many(19_000);
        let started = std::time::Instant::now();
        let error = parse(&text).unwrap_err().to_string();
        assert!(error.contains("more than 1000 rules"), "{error}");
        // The 1,001st lexeme closes on line 3 + 4 × 1,000 + 3.
        assert!(
            error.starts_with(&format!("line {}:", 3 + 4 * 1_000 + 3)),
            "{error}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // A file of 1,000 rules well over a thousand lines long is read in one pass.
        let at_cap = many(1_000);
        let started = std::time::Instant::now();
        assert_eq!(parse(&at_cap).unwrap().len(), 1_000);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
