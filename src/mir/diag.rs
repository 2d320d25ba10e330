//! Diagnostics: an error with a message and a source span, rendered as
//! `file:line:column: error: message` followed by the source line and a caret
//! (through codespan-reporting).

use std::fmt;

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::NoColor};

use super::ir::Span;

/// A named source text, for locating and rendering diagnostics.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile { name: name.into(), text: text.into() }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = self.text[line_start..offset].chars().count() + 1;
        (line, col)
    }
}

/// One error found in MIR input (by the parser or the verifier).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    /// Where in the source; [`Span::NONE`] for builder-made code.
    pub span: Span,
    /// For code without source spans: where the problem is, e.g.
    /// "in @k, block 'entry', instruction 3".
    pub context: Option<String>,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic { message: message.into(), span, context: None }
    }

    /// `line:col: message` (the form the tests assert), or the context form for
    /// code without spans.
    pub fn short(&self, file: Option<&SourceFile>) -> String {
        match file {
            Some(file) if self.span.is_known() => {
                let (line, col) = file.line_col(self.span.start as usize);
                format!("{line}:{col}: {}", self.message)
            }
            _ => match &self.context {
                Some(context) => format!("{context}: {}", self.message),
                None => self.message.clone(),
            },
        }
    }

    /// The full rendering: `file:line:col: error: message`, then the source line
    /// with the span underlined.
    pub fn render(&self, file: &SourceFile) -> String {
        if !self.span.is_known() {
            return format!("{}: error: {}\n", file.name, self.short(None));
        }
        let (line, col) = file.line_col(self.span.start as usize);
        let mut out = format!("{}:{line}:{col}: error: {}\n", file.name, self.message);
        let files = SimpleFile::new(file.name.as_str(), file.text.as_str());
        let mut range = self.span.range();
        range.end = range.end.min(file.text.len());
        range.start = range.start.min(range.end);
        let diagnostic = CsDiagnostic::error().with_labels(vec![Label::primary((), range)]);
        let config = term::Config { start_context_lines: 0, end_context_lines: 0, ..term::Config::default() };
        let mut writer = NoColor::new(Vec::new());
        if term::emit(&mut writer, &config, &files, &diagnostic).is_ok() {
            // codespan prints its own "error" header line first; keep only the snippet.
            let snippet = String::from_utf8_lossy(&writer.into_inner()).into_owned();
            for l in snippet.lines().skip(1) {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.short(None))
    }
}

impl std::error::Error for Diagnostic {}

/// Every error of one run of a pass that keeps going after the first (the
/// code generator reports all refusals of a module). Never empty; derefs to
/// the first error, and displays one error per line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

impl std::ops::Deref for Diagnostics {
    type Target = Diagnostic;
    fn deref(&self) -> &Diagnostic {
        &self.0[0]
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}
