//! The SPIR-V that build.rs compiled from `shaders/*.comp`, embedded in the library: nothing
//! is read from disk at run time.

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

/// The SPIR-V of `shaders/<stem>.comp`, or of a variant of a shader (its `// variant:` line).
pub fn spirv(stem: &str) -> Option<&'static [u8]> {
    SHADERS.iter().find(|(s, _)| *s == stem).map(|(_, b)| *b)
}

#[cfg(test)]
mod tests {
    use crate::kernels::Kernel;

    /// Every kernel names a shader the library embeds; kernels of one shader differ only by
    /// their specialization (the transforms', the residuals' size).
    #[test]
    fn every_kernel_names_an_embedded_shader() {
        for k in Kernel::all() {
            assert!(
                super::spirv(k.shader()).is_some(),
                "{k:?}: no shader {}",
                k.shader()
            );
        }
        let stems: Vec<&str> = Kernel::all().map(Kernel::shader).collect();
        let shared = stems
            .iter()
            .filter(|s| stems.iter().filter(|t| t == s).count() > 1);
        assert!(shared
            .into_iter()
            .all(|s| s.starts_with("itx") || s.starts_with("vp9_inter_residual")));
    }
}
