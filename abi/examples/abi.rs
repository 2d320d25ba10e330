//! `cargo run -p amdgpu-abi --example abi -- 'fn(i32) -> f32' gfx90a [amdgpu-cg|llvm] [--json]`
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sig = args.first().map(String::as_str).unwrap_or("fn(i32, f64, inreg i64, {i32, f32, i64}) -> f32");
    let cpu = args.get(1).map(String::as_str).unwrap_or("gfx90a");
    let conv = args.get(2).map(String::as_str).unwrap_or("amdgpu-cg");
    let json = args.iter().any(|a| a == "--json");
    match amdgpu_abi::cli_abi(sig, cpu, conv, json) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
