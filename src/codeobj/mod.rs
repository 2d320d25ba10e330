//! AMDHSA code objects: writer and reader (see docs/code-object.md).
