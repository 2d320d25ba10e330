//! Random well-formed kernels (tests/common/mirgen.rs, free of undefined
//! behaviour by construction) run in the interpreter without error, and every
//! run of a kernel gives the same result.

mod common;

use amdgpu_cg::mir::interp::{run_kernel_with, Launch, Memory, Options, RtValue};
use common::mirgen::{arb_kernel, OUTPUTS_PER_ITEM};
use proptest::prelude::*;

fn run(module: &amdgpu_cg::mir::Module, input: &[i32]) -> Vec<u8> {
    let n = input.len();
    let mut memory = Memory::new();
    let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let pin = memory.alloc(&bytes, 4);
    let pout = memory.alloc_zeroed(n * OUTPUTS_PER_ITEM as usize * 4, 4);
    let args = [RtValue::Scalar(pin), RtValue::Scalar(pout), RtValue::f32(0.75)];
    let launch = Launch::new([n as u32, 1, 1], [32, 1, 1]);
    let options = Options { max_instructions: 50_000_000, ..Options::default() };
    run_kernel_with(module, "random", &launch, &args, &mut memory, &options)
        .unwrap_or_else(|e| panic!("{e}\n{module}"));
    memory.read(pout, n * OUTPUTS_PER_ITEM as usize * 4).unwrap().to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn random_kernels_run_without_undefined_behaviour(module in arb_kernel(), seed in any::<u32>()) {
        amdgpu_cg::mir::verify::verify(&module).unwrap();
        let input: Vec<i32> = (0..64u32).map(|i| (i.wrapping_mul(2_654_435_761) ^ seed) as i32).collect();
        let first = run(&module, &input);
        prop_assert_eq!(first, run(&module, &input));
    }
}
