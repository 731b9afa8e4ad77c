//! Errors in workload files: always name the file, the JSON path (or line
//! and column for syntax errors), what was found and what was expected.

/// A workload that cannot be used, with enough context to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    /// File name, or `<string>` for in-memory input.
    pub file: String,
    /// JSON path such as `tasks.hog.phases.p1.run`, empty for syntax errors.
    pub path: String,
    /// 1-based line of a syntax error.
    pub line: Option<usize>,
    /// 1-based column of a syntax error.
    pub column: Option<usize>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl WorkloadError {
    /// An error at a JSON path.
    pub fn at(file: &str, path: &str, message: impl Into<String>) -> Self {
        WorkloadError {
            file: file.to_string(),
            path: path.to_string(),
            line: None,
            column: None,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{}:{}:{}: {}", self.file, l, c, self.message),
            _ if self.path.is_empty() => write!(f, "{}: {}", self.file, self.message),
            _ => write!(f, "{}: {}: {}", self.file, self.path, self.message),
        }
    }
}

impl std::error::Error for WorkloadError {}
