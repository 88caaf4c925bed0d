// The frame path's inter prediction (src/vp9/frame/inter.rs): a workgroup per block record
// predicts every plane of an inter block from its references (vp9_mc.glsl), as FFmpeg's
// inter_pred does; the residuals follow in a level of their own (vp9_inter_residual.comp).
// Intra blocks (and those FFmpeg leaves unpredicted: a reference of invalid dimensions) are
// left alone.
// Job: a word, the record index of an inter block (the host lists them by band of
// superblocks: src/vp9/frame/together.rs).
//
// VP9_SCALED (the `_scaled` variants): a frame with a reference of another size, whose blocks
// take FFmpeg's scaled functions. Frames without one (nearly all) run the variant without
// that path, whose code alone made lavapipe's inter prediction take 40 % longer
// (docs/benchmarks-history.md).
#version 450
#extension GL_GOOGLE_include_directive : require
// variant: vp9_inter_scaled VP9_SCALED
// variant: vp9_inter_high VP9_HIGH
// variant: vp9_inter_scaled_high VP9_HIGH VP9_SCALED

// A block's workgroup is one SIMD group of the device (its subgroup size, set by the host:
// src/gpu/pipeline.rs): most blocks are small, and the lanes of a bigger workgroup would idle
// through them (on lavapipe, three times the time at 32 where its SIMD is 8 wide); nothing
// here assumes a size.
layout(local_size_x = 32, local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
#define WORKGROUP int(gl_WorkGroupSize.x)

#include "vp9_frame.glsl"
#include "vp9_mc.glsl"

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    read_depth();
    Block b = load_block(data[pc.first_job + gl_WorkGroupID.x]);
    if ((b.flags & (BLOCK_INTRA | BLOCK_UNPREDICTED)) != 0u)
        return;
    predict_block(b);
}
