//! Malformed MIR inputs (tests/mir-errors/*.mir): each file starts with
//! `; expect: LINE:COL: MESSAGE`, the exact first diagnostic the parser or the
//! verifier must report. The rendered form must carry file:line:column and a
//! source snippet.

use std::path::Path;

use amdgpu_cg::mir::{self, SourceFile};

fn first_diagnostic(file: &SourceFile) -> Option<mir::Diagnostic> {
    match mir::parse(&file.text) {
        Err(d) => Some(d),
        Ok(module) => mir::verify::verify(&module).err().map(|ds| ds[0].clone()),
    }
}

#[test]
fn every_malformed_input_reports_its_expected_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mir-errors");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut failures = Vec::new();
    let mut messages = std::collections::HashSet::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let expected = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("; expect: "))
            .unwrap_or_else(|| panic!("{} has no '; expect:' line", path.display()))
            .to_string();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let file = SourceFile::new(name.clone(), text);
        match first_diagnostic(&file) {
            None => failures.push(format!("{name}: accepted, expected '{expected}'")),
            Some(d) => {
                let got = d.short(Some(&file));
                if got != expected {
                    failures.push(format!("{name}:\n  expected {expected}\n  got      {got}"));
                }
                let rendered = d.render(&file);
                let (line, col) = file.line_col(d.span.start as usize);
                assert!(rendered.starts_with(&format!("{name}:{line}:{col}: error: ")), "{rendered}");
                assert!(rendered.contains('^'), "no snippet with a caret in:\n{rendered}");
                messages.insert(d.message);
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), paths.len(), failures.join("\n"));
    assert!(paths.len() >= 30, "only {} malformed inputs", paths.len());
    assert_eq!(messages.len(), paths.len() - 1, "cases 05 and 36 share a message; all others must be distinct");
}
