// The frame path's inter prediction (src/vp9/frame/inter.rs): a workgroup per block record
// predicts every plane of an inter block from its references (vp9_mc.glsl), as FFmpeg's
// inter_pred does; the residuals follow in a level of their own (vp9_inter_residual.comp).
// Intra blocks (and those FFmpeg leaves unpredicted: a reference of invalid dimensions) are
// left alone.
// Job: the record index (first_job + workgroup).
#version 450
#extension GL_GOOGLE_include_directive : require

#define WORKGROUP 32
layout(local_size_x = WORKGROUP, local_size_y = 1, local_size_z = 1) in;

#include "vp9_frame.glsl"
#include "vp9_mc.glsl"

void main()
{
    if (gl_WorkGroupID.x >= pc.job_count)
        return;
    Block b = load_block(pc.first_job + gl_WorkGroupID.x);
    if ((b.flags & (BLOCK_INTRA | BLOCK_UNPREDICTED)) != 0u)
        return;
    predict_block(b);
}
