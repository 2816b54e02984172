//! Pronunciation dictionaries of API keys: created from rules or a file, listed, read, deleted, and resolved
//! into the lexicon a synthesis reads with. Only the key that made a dictionary sees or uses it: to any other
//! key it does not exist. Dictionaries are kept in the database like cloned voices and are never edited in
//! place, so a dictionary's version id always names the same rules.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::storage::{unix_now, DictionaryRecord, Storage, StorageError};
use crate::tts::lexicon::Lexicon;
use crate::tts::pronunciation::expand::{self, ReadingError, ReadsTooLong};
use crate::tts::pronunciation::{self, Rule, RuleError};

/// Most dictionaries one synthesis request may name (as ElevenLabs).
pub const MAX_LOCATORS: usize = 3;
/// Longest dictionary name, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1_000;

/// Why a dictionary request was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DictionaryError {
    /// The rules or the file are invalid (422); the message names the rule, line or symbol.
    #[error(transparent)]
    Rules(#[from] RuleError),
    /// A field other than the rules is invalid (422).
    #[error("{0}")]
    Invalid(String),
    /// The text reads longer than its limit with the dictionaries' rules (422).
    #[error(transparent)]
    TooLong(#[from] ReadsTooLong),
    /// No such dictionary (or version) for this key (404).
    #[error("{0}")]
    NotFound(String),
    /// The key already has as many dictionaries as allowed (409).
    #[error("at most {0} pronunciation dictionaries per API key; delete one first")]
    TooMany(usize),
    /// The database failed (503).
    #[error("dictionary storage failed: {0}")]
    Storage(String),
}

impl From<StorageError> for DictionaryError {
    fn from(error: StorageError) -> Self {
        DictionaryError::Storage(error.to_string())
    }
}

/// Names a dictionary to read a synthesis with (ElevenLabs' `pronunciation_dictionary_locators`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Locator {
    /// A dictionary of this key.
    #[schema(example = "pd_3f9a1c2e7b5d4a60b1c2d3e4")]
    pub pronunciation_dictionary_id: String,
    /// Its version; omitted or null: the current one.
    #[serde(default)]
    #[schema(example = "pdv_8e1b2c3d4f5a6b7c8d9e0f1a")]
    pub version_id: Option<String>,
}

/// A dictionary to create.
#[derive(Debug, Clone)]
pub struct NewDictionary {
    /// Display name.
    pub name: String,
    /// Optional description.
    pub description: Option<String>,
    /// Its rules, in order.
    pub rules: Vec<Rule>,
}

/// The API keys' dictionaries; cheap to clone.
#[derive(Clone)]
pub struct Dictionaries {
    db: Storage,
    base: Arc<Lexicon>,
    max_per_key: usize,
}

impl Dictionaries {
    /// Dictionaries in `db`, laid over the server's lexicon `base`, at most `max_per_key` per key.
    pub fn new(db: Storage, base: Arc<Lexicon>, max_per_key: usize) -> Self {
        Self {
            db,
            base,
            max_per_key,
        }
    }

    /// Check and keep a new dictionary for `owner`; nothing is stored unless all of it is valid.
    pub async fn create(
        &self,
        owner: &str,
        new: NewDictionary,
    ) -> Result<DictionaryRecord, DictionaryError> {
        let name = check_name(&new.name)?;
        let description = new
            .description
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty());
        if description
            .as_ref()
            .is_some_and(|d| d.chars().count() > MAX_DESCRIPTION_CHARS)
        {
            return Err(DictionaryError::Invalid(format!(
                "`description` is longer than {MAX_DESCRIPTION_CHARS} characters"
            )));
        }
        pronunciation::check(&new.rules)?;
        let record = DictionaryRecord {
            id: format!("pd_{}", &uuid::Uuid::new_v4().simple().to_string()[..24]),
            owner: owner.to_string(),
            name,
            description,
            version_id: format!("pdv_{}", &uuid::Uuid::new_v4().simple().to_string()[..24]),
            rules: new.rules,
            created_unix: unix_now(),
        };
        let max = self.max_per_key;
        let kept = self.db.insert_dictionary_within(&record, max).await?;
        if !kept {
            return Err(DictionaryError::TooMany(max));
        }
        tracing::info!(dictionary_id = %record.id, rules = record.rules.len(), "pronunciation dictionary created");
        Ok(record)
    }

    /// `owner`'s dictionaries, newest first: up to `limit` after the first `offset`, and whether more follow.
    pub async fn list(
        &self,
        owner: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<DictionaryRecord>, bool), DictionaryError> {
        let mut page = self.db.dictionaries(owner, offset, limit + 1).await?;
        let more = page.len() > limit;
        page.truncate(limit);
        Ok((page, more))
    }

    /// One of `owner`'s dictionaries.
    pub async fn get(&self, owner: &str, id: &str) -> Result<DictionaryRecord, DictionaryError> {
        self.db
            .dictionary(owner, id)
            .await?
            .ok_or_else(|| not_found(id))
    }

    /// One of `owner`'s dictionaries at a version.
    pub async fn get_version(
        &self,
        owner: &str,
        id: &str,
        version_id: &str,
    ) -> Result<DictionaryRecord, DictionaryError> {
        let record = self.get(owner, id).await?;
        if record.version_id != version_id {
            return Err(DictionaryError::NotFound(format!(
                "pronunciation dictionary {id:?} has no version {version_id:?}"
            )));
        }
        Ok(record)
    }

    /// Delete one of `owner`'s dictionaries (jobs already queued keep the rules they were created with).
    pub async fn delete(&self, owner: &str, id: &str) -> Result<(), DictionaryError> {
        let removed = self.db.delete_dictionary(owner, id).await?;
        if removed {
            Ok(())
        } else {
            Err(not_found(id))
        }
    }

    /// The rules of the dictionaries `locators` name, in their order; each must be `owner`'s (and at the
    /// version named, when one is).
    pub async fn rules_for(
        &self,
        owner: &str,
        locators: &[Locator],
    ) -> Result<Vec<Rule>, DictionaryError> {
        if locators.len() > MAX_LOCATORS {
            return Err(DictionaryError::Invalid(format!(
                "`pronunciation_dictionary_locators` names {} dictionaries; at most {MAX_LOCATORS} are allowed",
                locators.len()
            )));
        }
        let mut rules = Vec::new();
        for locator in locators {
            let id = &locator.pronunciation_dictionary_id;
            let record = match &locator.version_id {
                Some(version) => self.get_version(owner, id, version).await?,
                None => self.get(owner, id).await?,
            };
            rules.extend(record.rules);
        }
        Ok(rules)
    }

    /// What the voice agent's replies naming `locators` are read with (see [`Self::rules_for`]); a reply is
    /// measured against the rules when it is spoken ([`expand::read_length`]), as it is not known before.
    pub async fn resolve(
        &self,
        owner: &str,
        locators: &[Locator],
    ) -> Result<Option<Arc<Lexicon>>, DictionaryError> {
        let rules = self.rules_for(owner, locators).await?;
        self.layer(rules, None).await
    }

    /// What a synthesis of `text` with `rules` reads with: the server's lexicon with the rules laid over it, in
    /// order; `None` (the voices' own lexicon) when there are none. Refused when `text` reads longer than
    /// `max_chars` with the rules (an alias counts as what it is read as: see [`expand`]).
    pub async fn reading(
        &self,
        rules: Vec<Rule>,
        text: &str,
        max_chars: usize,
    ) -> Result<Option<Arc<Lexicon>>, DictionaryError> {
        self.layer(rules, Some((text.to_string(), max_chars))).await
    }

    /// The rules laid over the server's lexicon on a blocking thread (thousands of rules take a moment), and
    /// the text, when given, measured with them against its limit.
    async fn layer(
        &self,
        rules: Vec<Rule>,
        text: Option<(String, usize)>,
    ) -> Result<Option<Arc<Lexicon>>, DictionaryError> {
        if rules.is_empty() {
            return Ok(None);
        }
        let base = Arc::clone(&self.base);
        let layered = tokio::task::spawn_blocking(move || match text {
            Some((text, max)) => expand::layered_within(&base, &rules, &text, max),
            None => pronunciation::layered(&base, &rules).map_err(ReadingError::from),
        })
        .await
        .map_err(|e| DictionaryError::Storage(format!("building the lexicon failed: {e}")))?
        .map_err(|error| match error {
            ReadingError::Rules(rules) => DictionaryError::Rules(rules),
            ReadingError::TooLong(long) => DictionaryError::TooLong(long),
        })?;
        Ok(Some(Arc::new(layered)))
    }
}

/// A dictionary's `name` as kept: the rules of API key names (trimmed, 1 to [`MAX_NAME_CHARS`] characters, no
/// control or invisible characters such as line breaks or bidirectional overrides), or why it is refused.
pub fn check_name(name: &str) -> Result<String, DictionaryError> {
    crate::storage::check_display_name("dictionary name", name, MAX_NAME_CHARS)
        .map_err(|reason| DictionaryError::Invalid(format!("`name`: {reason}")))
}

fn not_found(id: &str) -> DictionaryError {
    DictionaryError::NotFound(format!("pronunciation dictionary {id:?} not found"))
}
