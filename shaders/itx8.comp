// VP9 8x8 inverse transforms (every type FFmpeg has at this size), 8-bit.
#version 450
#extension GL_GOOGLE_include_directive : require
#define N 8
#define BLOCKS 32
#define FINAL_SHIFT 5
#define IDCT_N idct8
#define IADST_N iadst8
#define HAS_ADST
#include "itx_1d.glsl"
#include "itx_main.glsl"
