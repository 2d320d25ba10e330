//! Launch lines of test sources: `PREFIX --grid G --block B --buffer ... --arg ...`
//! (the flags of `amdgpu-cg run`), shared by tests/cf_shapes.rs (`; launch:` in
//! MIR) and tests/spirv.rs (`// launch:` in OpenCL C).
#![allow(dead_code)]

use amdgpu_cg::mir::launch::LaunchSpec;

/// One launch line.
pub struct Launch {
    /// 1-based line number in the file.
    pub line: usize,
    /// The flags as written.
    pub text: String,
    pub spec: LaunchSpec,
}

/// Every line of `text` that starts with `prefix`, parsed, with at most
/// `max_instructions` per run; an error names the file and line.
pub fn launches(file: &str, text: &str, prefix: &str, max_instructions: u64) -> Result<Vec<Launch>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some(flags) = line.strip_prefix(prefix) else { continue };
        let at = format!("{file}:{}", n + 1);
        let words: Vec<&str> = flags.split_whitespace().collect();
        if !words.len().is_multiple_of(2) {
            return Err(format!("{at}: a flag without its value in `{}`", flags.trim()));
        }
        let (mut grid, mut block) = (None, None);
        let (mut buffers, mut args, mut print) = (Vec::new(), Vec::new(), Vec::new());
        let mut launch_flags = Vec::new();
        for pair in words.chunks(2) {
            let value = pair[1].to_string();
            match pair[0] {
                "--grid" => grid = Some(value),
                "--block" => block = Some(value),
                "--buffer" => buffers.push(value),
                "--arg" => args.push(value),
                "--print" => print.push(value),
                "--offset" | "--work-dim" => launch_flags.push((pair[0], value)),
                other => return Err(format!("{at}: unknown flag {other}")),
            }
        }
        let (Some(grid), Some(block)) = (grid, block) else {
            return Err(format!("{at}: --grid and --block are required"));
        };
        let mut spec = LaunchSpec::from_flags(&grid, &block, &buffers, &args, &print).map_err(|e| format!("{at}: {e}"))?;
        for (flag, value) in launch_flags {
            spec.set_flag(flag, &value).map_err(|e| format!("{at}: {e}"))?;
        }
        spec.max_instructions = Some(max_instructions);
        out.push(Launch { line: n + 1, text: flags.trim().to_string(), spec });
    }
    if out.is_empty() {
        return Err(format!("{file}: no `{}` line", prefix.trim()));
    }
    Ok(out)
}
