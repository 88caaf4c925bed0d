//! The SPIR-V that build.rs compiled from `shaders/*.comp`, embedded in the library: nothing
//! is read from disk at run time.

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

/// The SPIR-V of `shaders/<stem>.comp`, or of a variant of a shader (its `// variant:` line).
pub fn spirv(stem: &str) -> Option<&'static [u8]> {
    SHADERS.iter().find(|(s, _)| *s == stem).map(|(_, b)| *b)
}
