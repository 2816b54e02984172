//! The model catalog.
