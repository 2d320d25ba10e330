// The control-flow shape nested3_break2 (tests/data/cf/nested3_break2.mir), through SPIR-V:
// its OpenCL C twin compiled by clang-22 -target spirv64.
// launch: --grid 192 --block 96 --buffer out=i32:fill:0xdeadbeef:384 --arg out=@out
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:256 --arg out=@out
#include "../data/cf/nested3_break2.cl"
