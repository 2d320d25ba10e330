//! Clang offload bundles: several devices' code objects in one file, the way
//! HIP fat binaries carry them (`clang-offload-bundler -type=o`).
//!
//! The format, as clang-offload-bundler-22 writes it (measured on the fat binary
//! `clang-22 -x hip --offload-arch=gfx90a --offload-arch=gfx1100 --cuda-device-only`
//! makes, which bundles with `-bundle-align=4096`): the 24-byte magic
//! `__CLANG_OFFLOAD_BUNDLE__`, the entry count (u64), then per entry its offset,
//! size and id length (u64 each) and the id; then each entry's bytes at its
//! offset, aligned to 4096, zeros between; the file ends with the last entry.
//! HIP's entries are the empty host entry `host-x86_64-unknown-linux-gnu-` and
//! one `hipv4-amdgcn-amd-amdhsa--<target id>` per device.

use super::{CodeObjectError, CodeObjectTarget};

/// The bundle's magic string.
pub const MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// The magic of compressed bundles (`clang-offload-bundler --compress`).
pub const COMPRESSED_MAGIC: &[u8; 4] = b"CCOB";
/// The alignment of each entry's bytes (clang's `-bundle-align=4096` for HIP).
pub const ALIGN: usize = 4096;
/// The empty host entry of a HIP fat binary.
pub const HOST_ENTRY: &str = "host-x86_64-unknown-linux-gnu-";

/// One entry: its id (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`) and bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleEntry {
    pub id: String,
    pub offset: u64,
    pub data: Vec<u8>,
}

/// The entry id of a device's code object.
pub fn device_entry_id(target: &CodeObjectTarget) -> String {
    format!("hipv4-amdgcn-amd-amdhsa--{}", target.processor_with_features())
}

/// Whether `bytes` start like a bundle (compressed or not).
pub fn is_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC) || bytes.starts_with(COMPRESSED_MAGIC)
}

/// The first id that `ids` repeat (or the host entry's): a bundle cannot
/// hold two entries with one id.
pub fn repeated_id<'a>(ids: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = vec![HOST_ENTRY];
    for id in ids {
        if seen.contains(&id) {
            return Some(id);
        }
        seen.push(id);
    }
    None
}

/// The error for a repeated entry id.
pub fn repeated_id_error(id: &str) -> CodeObjectError {
    CodeObjectError::Bundle(format!(
        "two entries for {id} (a bundle names a device by its target id, which has no wave size: compile wave32 and wave64 into separate bundles)"
    ))
}

/// The bundle of the host entry and `devices` (id and code object each), in order.
/// Two entries with one id are an error (a bundle cannot tell them apart).
pub fn write(devices: &[(String, Vec<u8>)]) -> Result<Vec<u8>, CodeObjectError> {
    if let Some(id) = repeated_id(devices.iter().map(|(id, _)| id.as_str())) {
        return Err(repeated_id_error(id));
    }
    let mut entries: Vec<(&str, &[u8])> = vec![(HOST_ENTRY, &[])];
    entries.extend(devices.iter().map(|(id, data)| (id.as_str(), data.as_slice())));
    let header: usize = MAGIC.len() + 8 + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut offsets = Vec::with_capacity(entries.len());
    let mut end = header;
    for (_, data) in &entries {
        let at = end.next_multiple_of(ALIGN);
        offsets.push(at);
        end = at + data.len();
    }
    let mut out = Vec::with_capacity(end);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for ((id, data), at) in entries.iter().zip(&offsets) {
        out.extend_from_slice(&(*at as u64).to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
    }
    for ((_, data), at) in entries.iter().zip(&offsets) {
        out.resize(*at, 0);
        out.extend_from_slice(data);
    }
    Ok(out)
}

/// `n` bytes at `*at`, moving past them; `None` past the end.
fn take<'a>(bytes: &'a [u8], at: &mut usize, n: u64) -> Option<&'a [u8]> {
    let end = at.checked_add(usize::try_from(n).ok()?).filter(|&e| e <= bytes.len())?;
    let slice = &bytes[*at..end];
    *at = end;
    Some(slice)
}

/// Reads a bundle's entries (checking every offset and size against the file).
pub fn read(bytes: &[u8]) -> Result<Vec<BundleEntry>, CodeObjectError> {
    let bad = |m: String| CodeObjectError::Bundle(m);
    if bytes.starts_with(COMPRESSED_MAGIC) {
        return Err(bad("a compressed offload bundle (CCOB): unbundle it with clang-offload-bundler first".into()));
    }
    if !bytes.starts_with(MAGIC) {
        return Err(bad("not a clang offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)".into()));
    }
    let mut at = MAGIC.len();
    let word = |at: &mut usize, what: &str| -> Result<u64, CodeObjectError> {
        let w = take(bytes, at, 8).ok_or_else(|| bad(format!("the header ends inside {what}")))?;
        Ok(u64::from_le_bytes(w.try_into().expect("8 bytes")))
    };
    let count = word(&mut at, "the entry count")?;
    let mut entries = Vec::new();
    // Entries are copied out: their sizes together may not exceed the file
    // (clang's never overlap), or a damaged header could ask for gigabytes.
    let mut total: u64 = 0;
    for i in 0..count {
        let offset = word(&mut at, "an entry offset")?;
        let size = word(&mut at, "an entry size")?;
        let id_len = word(&mut at, "an entry id length")?;
        let id = take(bytes, &mut at, id_len).ok_or_else(|| bad(format!("entry {i}'s id runs past the end of the file")))?;
        let id = std::str::from_utf8(id).map_err(|_| bad(format!("entry {i}'s id is not UTF-8")))?.to_string();
        let mut data_at = usize::try_from(offset).unwrap_or(usize::MAX);
        let data = take(bytes, &mut data_at, size).ok_or_else(|| {
            bad(format!("entry {id} (offset {offset}, {size} bytes) runs past the end of the file ({} bytes)", bytes.len()))
        })?;
        total = total.saturating_add(size);
        if total > bytes.len() as u64 {
            return Err(bad(format!("the entries up to {id} add up to more bytes than the file has ({}): they overlap", bytes.len())));
        }
        entries.push(BundleEntry { id, offset, data: data.to_vec() });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_read() {
        let a = vec![1u8; 5000];
        let b = vec![2u8; 10];
        let bundle = write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a".into(), a.clone()), ("hipv4-amdgcn-amd-amdhsa--gfx1100".into(), b.clone())]).unwrap();
        let entries = read(&bundle).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!((entries[0].id.as_str(), entries[0].offset, entries[0].data.len()), (HOST_ENTRY, 4096, 0));
        assert_eq!((entries[1].offset, &entries[1].data), (4096, &a));
        assert_eq!((entries[2].offset, &entries[2].data), (3 * 4096, &b));
        assert_eq!(bundle.len(), 3 * 4096 + 10);
        assert!(write(&[("x".into(), a.clone()), ("x".into(), b)]).is_err());
    }

    #[test]
    fn damaged_bundles_are_errors_not_panics() {
        let bundle = write(&[("hipv4-amdgcn-amd-amdhsa--gfx90a".into(), vec![7u8; 300])]).unwrap();
        for len in 0..bundle.len() {
            let _ = read(&bundle[..len]);
        }
        for i in 24..120 {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut damaged = bundle.clone();
                damaged[i] ^= flip;
                let _ = read(&damaged);
            }
        }
        assert!(read(&bundle[..bundle.len() - 1]).is_err());
        // Many entries over the same bytes: an error, not a huge allocation.
        let mut overlapping = MAGIC.to_vec();
        overlapping.extend_from_slice(&1000u64.to_le_bytes());
        for _ in 0..1000 {
            for w in [0u64, 0, 0] {
                overlapping.extend_from_slice(&w.to_le_bytes());
            }
        }
        let size = overlapping.len() as u64;
        for e in 0..1000 {
            let at = MAGIC.len() + 8 + e * 24 + 8;
            overlapping[at..at + 8].copy_from_slice(&size.to_le_bytes());
        }
        assert!(read(&overlapping).unwrap_err().to_string().contains("overlap"));
        assert!(read(b"CCOB....").is_err());
    }
}
