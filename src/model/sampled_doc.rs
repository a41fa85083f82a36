//! A document as a source hands it to the sample pass.

use crate::bsonx::DocRef;
use bson::{Document, RawDocumentBuf};

/// The fields the sample reads (a source may hold only those: `DocumentSource::read_only`)
/// and the whole document's BSON size, 0 when the source cannot know it.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledDoc {
    pub(crate) body: DocBody,
    pub(crate) bson_size: usize,
}

/// Decoded (files), or the raw BSON the driver read (live): the sample looks up only
/// the key paths in it, so a live read decodes nothing else.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DocBody {
    Doc(Document),
    Raw(RawDocumentBuf),
}

impl SampledDoc {
    pub(crate) fn doc(doc: Document, bson_size: usize) -> Self {
        SampledDoc { body: DocBody::Doc(doc), bson_size }
    }

    pub(crate) fn view(&self) -> DocRef<'_> {
        match &self.body {
            DocBody::Doc(d) => DocRef::Doc(d),
            DocBody::Raw(r) => DocRef::Raw(r),
        }
    }
}
