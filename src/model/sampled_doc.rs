//! A document as a source hands it to the sample pass.

use bson::Document;

/// The fields the sample reads (a source may hold only those: `DocumentSource::read_only`)
/// and the whole document's BSON size, 0 when the source cannot know it.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledDoc {
    pub doc: Document,
    pub bson_size: usize,
}
