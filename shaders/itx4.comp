// VP9 4x4 inverse transforms (every type FFmpeg has at this size), 8-bit.
#version 450
#extension GL_GOOGLE_include_directive : require
#define N 4
#define BLOCKS 64
#define FINAL_SHIFT 4
#define IDCT_N idct4
#define IADST_N iadst4
#define HAS_ADST
#define HAS_WHT
#include "itx_1d.glsl"
#include "itx_main.glsl"
