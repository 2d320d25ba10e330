// The control-flow shape loop_values_after (tests/data/cf/loop_values_after.mir), through SPIR-V:
// its OpenCL C twin compiled by clang-22 -target spirv64.
// launch: --grid 192 --block 96 --buffer out=i32:fill:0xdeadbeef:768 --arg out=@out
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:512 --arg out=@out
#include "../data/cf/loop_values_after.cl"
