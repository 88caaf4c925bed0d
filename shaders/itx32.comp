// VP9 32x32 inverse transforms (every type FFmpeg has at this size), 8-bit.
#version 450
#extension GL_GOOGLE_include_directive : require
#define N 32
#define BLOCKS 2
#define FINAL_SHIFT 6
#define IDCT_N idct32
#define IADST_N iadst32

#include "itx_1d.glsl"
#include "itx_main.glsl"
