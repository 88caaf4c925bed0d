//! One module per DSP family: the CPU reference beside the GPU job encoding.

pub mod itx;
