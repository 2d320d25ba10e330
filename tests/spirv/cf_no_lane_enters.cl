// The control-flow shape no_lane_enters (tests/data/cf/no_lane_enters.mir), through SPIR-V:
// its OpenCL C twin compiled by clang-22 -target spirv64.
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:512 --arg out=@out --arg n=0 --arg m=0
// launch: --grid 192 --block 96 --buffer out=i32:fill:0xdeadbeef:768 --arg out=@out --arg n=0 --arg m=0
// launch: --grid 128 --block 64 --buffer out=i32:fill:0xdeadbeef:512 --arg out=@out --arg n=40 --arg m=3
#include "../data/cf/no_lane_enters.cl"
