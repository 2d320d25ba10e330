//! Shared helpers of the tests/codeobj_*.rs tests: running the LLVM 22 tools (via
//! `amdgpu_isa::llvm_tools::require`: skip outside CI, fail in CI), assembling
//! kernel bodies with llvm-mc-22, building the code objects the tests write.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use amdgpu_cg::abi::descriptor::KernelResources;
use amdgpu_cg::abi::{AddrSpace, Type};
use amdgpu_cg::codeobj::{
    CodeObject, CodeObjectTarget, CodeObjectVersion, Function, KernelArg, KernelInfo, Reloc,
    Visibility,
};
use amdgpu_cg::isa::{Generation, WaveSize};
use object::{Object, ObjectSection, ObjectSymbol};

/// All the tools, or `None` (skip) outside CI when one is missing.
pub fn tools(names: &[&str]) -> Option<Vec<PathBuf>> {
    let mut out = Vec::new();
    for n in names {
        out.push(amdgpu_cg::isa::llvm_tools::require(n)?);
    }
    Some(out)
}

/// A fresh directory for one test's files.
pub fn out_dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("codeobj")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `cmd`; panics unless it succeeds with an empty stderr ("without any
/// warning"). Returns stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{stderr}\n{stdout}",
        out.status
    );
    assert!(
        stderr.trim().is_empty(),
        "{cmd:?} printed on stderr:\n{stderr}"
    );
    stdout
}

/// `-mcpu` and `-mattr` for llvm-mc / llvm-objdump.
pub fn mcpu_args(t: &CodeObjectTarget) -> Vec<String> {
    let mut v = vec![format!("--mcpu={}", t.target.gpu.name())];
    if t.target.wave != t.target.gpu.default_wave_size() {
        v.push(format!("--mattr=+wavefrontsize{}", t.target.wave.lanes()));
    }
    v
}

/// Assembles labelled bodies with llvm-mc-22 (one invocation) and returns each
/// label's bytes.
pub fn assemble(
    mc: &Path,
    dir: &Path,
    t: &CodeObjectTarget,
    bodies: &[(&str, String)],
) -> HashMap<String, Vec<u8>> {
    let tag = format!("{}_w{}", t.target.gpu.name(), t.target.wave.lanes());
    let src = dir.join(format!("bodies_{tag}.s"));
    let obj = dir.join(format!("bodies_{tag}.o"));
    let mut text = String::from(".text\n");
    for (name, body) in bodies {
        text += &format!("{name}:\n{body}\n");
    }
    text += "end_of_bodies:\n";
    std::fs::write(&src, text).unwrap();
    run(Command::new(mc)
        .args(["-triple=amdgcn-amd-amdhsa", "-filetype=obj"])
        .args(mcpu_args(t))
        .arg(&src)
        .arg("-o")
        .arg(&obj));
    let data = std::fs::read(&obj).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let text = file.section_by_name(".text").unwrap();
    let bytes = text.data().unwrap();
    let mut labels: Vec<(u64, String)> = file
        .symbols()
        .filter(|s| s.section_index() == Some(text.index()))
        .map(|s| (s.address(), s.name().unwrap().to_string()))
        .collect();
    labels.sort();
    let mut out = HashMap::new();
    for w in labels.windows(2) {
        out.insert(
            w[0].1.clone(),
            bytes[w[0].0 as usize..w[1].0 as usize].to_vec(),
        );
    }
    out
}

/// Kernel bodies: `store` writes kernarg dword 2 (`v`) to `*out` (kernarg ptr in
/// s[0:1]); `caller` calls `helper` through s_getpc/s_add/s_addc/s_swappc with
/// placeholder literals; `helper` returns.
pub fn bodies(gen: Generation) -> Vec<(&'static str, String)> {
    let (load2, load1, store) = match gen {
        Generation::Gfx9 => ("s_load_dwordx2", "s_load_dword", "global_store_dword"),
        Generation::Gfx11 => ("s_load_b64", "s_load_b32", "global_store_b32"),
    };
    vec![
        (
            "store",
            format!(
                "  {load2} s[2:3], s[0:1], 0x0\n  {load1} s4, s[0:1], 0x8\n  v_mov_b32 v1, 0\n  s_waitcnt lgkmcnt(0)\n  v_mov_b32 v2, s4\n  {store} v1, v2, s[2:3]\n  s_endpgm"
            ),
        ),
        (
            "caller",
            "  s_getpc_b64 s[4:5]\n  s_add_u32 s4, s4, 0x12345678\n  s_addc_u32 s5, s5, 0x12345678\n  s_swappc_b64 s[30:31], s[4:5]\n  s_endpgm"
                .to_string(),
        ),
        ("helper", "  s_setpc_b64 s[30:31]".to_string()),
    ]
}

/// The explicit arguments of `store`: (global int *out, int v).
pub fn store_args() -> Vec<KernelArg> {
    KernelArg::layout(&[("out", Type::Ptr(AddrSpace::Global)), ("v", Type::I32)])
}

/// Resources of `store`: 3 VGPRs, 5 SGPRs, kernarg pointer, workgroup id x.
pub fn store_resources(code: &[u8]) -> KernelResources {
    KernelResources {
        num_vgpr: 3,
        num_sgpr: 5,
        code_size: code.len() as u32,
        ..KernelResources::default()
    }
}

/// A code object with kernels `store` (no hidden args, like clang's OpenCL) and
/// `caller` (all hidden args of the version; calls the hidden function `helper`).
/// With `with_helper = false`, `helper` is left for the linker.
pub fn sample(
    t: CodeObjectTarget,
    version: CodeObjectVersion,
    code: &HashMap<String, Vec<u8>>,
    with_helper: bool,
) -> CodeObject {
    let store_code = code["store"].clone();
    let store = KernelInfo::from_resources(
        &t,
        version,
        store_args(),
        false,
        store_resources(&store_code),
        256,
    )
    .unwrap();
    let caller_code = code["caller"].clone();
    let caller_res = KernelResources {
        num_vgpr: 1,
        num_sgpr: 32,
        uses_vcc: true,
        code_size: caller_code.len() as u32,
        ..KernelResources::default()
    };
    let caller_args = KernelArg::layout(&[("n", Type::I64)]);
    let caller =
        KernelInfo::from_resources(&t, version, caller_args, true, caller_res, 1024).unwrap();
    let mut functions = vec![
        Function {
            name: "store".into(),
            code: store_code,
            visibility: Visibility::Protected,
            kernel: Some(store),
            relocs: vec![],
            frame: vec![],
        },
        Function {
            name: "caller".into(),
            code: caller_code,
            visibility: Visibility::Protected,
            kernel: Some(caller),
            relocs: Reloc::getpc_pair(4, "helper").to_vec(),
            frame: vec![],
        },
    ];
    if with_helper {
        functions.push(Function {
            name: "helper".into(),
            code: code["helper"].clone(),
            visibility: Visibility::Hidden,
            kernel: None,
            relocs: vec![],
            frame: vec![],
        });
    }
    CodeObject {
        target: t,
        version,
        functions,
        printf: Vec::new(),
        data: Vec::new(),
    }
}

/// The targets the tests cover.
pub fn targets() -> Vec<CodeObjectTarget> {
    vec![
        CodeObjectTarget::parse("gfx90a", None).unwrap(),
        CodeObjectTarget::parse("gfx90a:xnack-", None).unwrap(),
        CodeObjectTarget::parse("gfx942:sramecc+:xnack-", None).unwrap(),
        CodeObjectTarget::parse("gfx1100", None).unwrap(),
        CodeObjectTarget::parse("gfx1100", Some(WaveSize::W64)).unwrap(),
    ]
}

/// File name for a target and version.
pub fn file_name(t: &CodeObjectTarget, v: CodeObjectVersion, ext: &str) -> String {
    format!(
        "sample.{}.w{}.v{}.{ext}",
        t.processor_with_features().replace(':', "_"),
        t.target.wave.lanes(),
        v.number()
    )
}

/// Splits the output of a tool run on several files at its "File: NAME" lines.
pub fn split_by_file(output: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut current: Option<String> = None;
    let mut buf = String::new();
    for line in output.lines() {
        if let Some(name) = line.strip_prefix("File: ") {
            if let Some(c) = current.take() {
                map.insert(c, std::mem::take(&mut buf));
            }
            current = Some(name.trim().to_string());
            continue;
        }
        buf += line;
        buf.push('\n');
    }
    if let Some(c) = current {
        map.insert(c, buf);
    }
    map
}

/// A symbol line of `llvm-readelf -s`: (value, size, type, bind, vis, ndx, name).
#[derive(Debug, Clone)]
pub struct SymLine {
    pub table: String,
    pub value: u64,
    pub size: u64,
    pub kind: String,
    pub bind: String,
    pub vis: String,
    pub ndx: String,
    pub name: String,
}

/// Parses the symbol tables of `llvm-readelf -s --dyn-syms` output.
pub fn parse_symbols(readelf: &str) -> Vec<SymLine> {
    let mut out = Vec::new();
    let mut table = String::new();
    for line in readelf.lines() {
        if let Some(rest) = line.strip_prefix("Symbol table '") {
            table = rest.split('\'').next().unwrap().to_string();
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 8 && f[0].ends_with(':') && f[0][..f[0].len() - 1].parse::<u32>().is_ok() {
            let size = if let Some(h) = f[2].strip_prefix("0x") {
                u64::from_str_radix(h, 16).unwrap()
            } else {
                f[2].parse().unwrap()
            };
            out.push(SymLine {
                table: table.clone(),
                value: u64::from_str_radix(f[1], 16).unwrap(),
                size,
                kind: f[3].into(),
                bind: f[4].into(),
                vis: f[5].into(),
                ndx: f[6].into(),
                name: f[7].into(),
            });
        }
    }
    out
}

/// Section lines of `llvm-readelf -S`: (name, type, address, offset, size, flags, align).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecLine {
    pub name: String,
    pub kind: String,
    pub addr: u64,
    pub size: u64,
    pub flags: String,
    pub align: u64,
}

pub fn parse_sections(readelf: &str) -> Vec<SecLine> {
    let mut out = Vec::new();
    for line in readelf.lines() {
        let Some(rest) = line.trim_start().strip_prefix('[') else {
            continue;
        };
        let Some((idx, rest)) = rest.split_once(']') else {
            continue;
        };
        if idx.trim().parse::<u32>().is_err()
            || idx.trim() == "0" && rest.trim().starts_with("NULL")
        {
            continue;
        }
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() < 9 {
            continue;
        }
        // Name Type Address Off Size ES [Flg] Lk Inf Al (Flg may be empty).
        let has_flags = f.len() == 10;
        out.push(SecLine {
            name: f[0].into(),
            kind: f[1].into(),
            addr: u64::from_str_radix(f[2], 16).unwrap(),
            size: u64::from_str_radix(f[4], 16).unwrap(),
            flags: if has_flags {
                f[6].into()
            } else {
                String::new()
            },
            align: f[f.len() - 1].parse().unwrap(),
        });
    }
    out
}

/// Program header types in order from `llvm-readelf -l`.
pub fn parse_segments(readelf: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_table = false;
    for line in readelf.lines() {
        if line.trim_start().starts_with("Type ") && line.contains("VirtAddr") {
            in_table = true;
            continue;
        }
        if in_table {
            if line.trim().is_empty() {
                break;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 8 && f[1].starts_with("0x") {
                // Type Offset VirtAddr PhysAddr FileSiz MemSiz Flg... Align
                let flags = f[6..f.len() - 1].join(" ");
                out.push((f[0].to_string(), flags));
            }
        }
    }
    out
}

/// Runs `llvm-readelf-22 -x SECTION` and returns the bytes it dumps with the
/// address of the first.
pub fn hex_dump(readelf: &Path, file: &Path, section: &str) -> (u64, Vec<u8>) {
    let out = run(Command::new(readelf).arg("-x").arg(section).arg(file));
    let mut start = None;
    let mut bytes = Vec::new();
    for line in out.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("0x") else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let addr = u64::from_str_radix(f.next().unwrap(), 16).unwrap();
        start.get_or_insert(addr);
        for word in f.take(4) {
            if word.len() % 2 != 0 || !word.chars().all(|c| c.is_ascii_hexdigit()) {
                break;
            }
            for i in (0..word.len()).step_by(2) {
                bytes.push(u8::from_str_radix(&word[i..i + 2], 16).unwrap());
            }
        }
    }
    (start.unwrap_or(0), bytes)
}

/// The 32-bit literal of an `llvm-objdump -d` line, read from its encoding
/// comment (`// ADDR: OPCODE LITERAL`).
pub fn literal_of(line: &str) -> u64 {
    let enc = line
        .split("//")
        .nth(1)
        .unwrap_or_else(|| panic!("no encoding comment in {line:?}"));
    let words: Vec<&str> = enc.split(':').nth(1).unwrap().split_whitespace().collect();
    assert_eq!(words.len(), 2, "expected opcode + literal in {line:?}");
    u64::from_str_radix(words[1], 16).unwrap()
}

/// Builds the checker; `None` (skip) outside CI when cc or comgr is missing.
pub fn build_checker(dir: &std::path::Path) -> Option<PathBuf> {
    let cc = amdgpu_cg::isa::llvm_tools::require("cc")?;
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/comgr_check.c");
    let exe = dir.join("comgr_check");
    let out = Command::new(cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lamd_comgr")
        .output()
        .expect("cc runs");
    if !out.status.success() {
        let msg = format!(
            "cannot build the comgr checker (install libamd-comgr-dev: scripts/setup):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if std::env::var_os("CI").is_some() {
            panic!("{msg}");
        }
        eprintln!("note: skipping: {msg}");
        return None;
    }
    assert!(
        out.stderr.is_empty(),
        "cc warned:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}
