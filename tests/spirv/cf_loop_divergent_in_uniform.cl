// The control-flow shape loop_divergent_in_uniform (tests/data/cf/loop_divergent_in_uniform.mir), through SPIR-V:
// its OpenCL C twin compiled by clang-22 -target spirv64.
// launch: --grid 192 --block 96 --buffer out=i32:fill:0xdeadbeef:960 --arg out=@out --arg m=3
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:640 --arg out=@out --arg m=2
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:640 --arg out=@out --arg m=0
#include "../data/cf/loop_divergent_in_uniform.cl"
