// The control-flow shape loop_uniform_in_divergent (tests/data/cf/loop_uniform_in_divergent.mir), through SPIR-V:
// its OpenCL C twin compiled by clang-22 -target spirv64.
// launch: --grid 192 --block 96 --buffer out=i32:fill:0xdeadbeef:1152 --arg out=@out --arg m=2
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:768 --arg out=@out --arg m=0
#include "../data/cf/loop_uniform_in_divergent.cl"
