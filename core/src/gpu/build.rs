//! One build of the edge files: the stencil, arithmetic, grey, norm and output compiled in as NVRTC `-D` options
//! (`cuda/sobel.cuh`), and for a filter file that the edge command runs, the stencil as the filter's kernel
//! (`cuda/conv.cuh`).

use crate::conv::ConvKernel;
use crate::sobel::{Compat, Filter, Grey, Ksize, Norm, Number, Operator, Output, Stencil};

/// What is compiled into the kernels: the stencil, the arithmetic, the grey, the norm and the output (`-D`
/// options). The border is a kernel argument, so one build serves every border.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Build {
    /// Sobel or Scharr.
    pub operator: Operator,
    /// The kernel size.
    pub ksize: Ksize,
    /// Exact or the report's arithmetic.
    pub compat: Compat,
    /// How RGB becomes grey.
    pub grey: Grey,
    /// L2 or L1 edges.
    pub norm: Norm,
    /// What each pixel writes.
    pub output: Output,
}

impl Build {
    /// The build of `filter`'s edges (its border is a kernel argument).
    pub fn of(filter: Filter) -> Build {
        Build::with_output(filter, Output::Edges)
    }

    /// The build of `filter` writing `output`.
    pub fn with_output(filter: Filter, output: Output) -> Build {
        let Filter { operator, ksize, compat, grey, norm, .. } = filter;
        Build { operator, ksize, compat, grey, norm, output }
    }

    /// The stencil compiled in.
    pub fn stencil(self) -> Stencil {
        Stencil::of(self.operator, self.ksize)
    }

    /// The NVRTC `-D` options that select this build: the stencil's constants always (`cuda/sobel.cuh` states
    /// the default build's, which these equal for it: a test compiles both), the rest where not the default.
    pub fn defines(self) -> Vec<String> {
        let st = self.stencil();
        let list = |taps: &[i32]| taps.iter().map(i32::to_string).collect::<Vec<_>>().join(",");
        let (edge, centre, levels) = st.factors();
        let mut d = vec![
            format!("-DRADIUS={}", st.radius),
            format!("-DTAPS_SMOOTH={}", list(st.smooth())),
            format!("-DTAPS_DERIV={}", list(st.deriv())),
            format!("-DTAP_EDGE={edge}"),
            format!("-DTAP_CENTRE={centre}"),
            format!("-DBINOMIAL_LEVELS={levels}"),
            format!("-DGRADIENT_BOUND={}", st.bound()),
        ];
        if self.compat == Compat::Report {
            d.push("-DCOMPAT_REPORT=1".to_owned());
        }
        if self.grey == Grey::Bt601 {
            d.push("-DGREY_BT601=1".to_owned());
        }
        if self.norm == Norm::L1 {
            d.push("-DNORM_L1=1".to_owned());
        }
        let number = |n: Number| match n {
            Number::I16 => 1,
            Number::I32 => 2,
            Number::F32 => 3,
        };
        match self.output {
            Output::Edges => {}
            Output::Gradients(n) => {
                d.push("-DOUTPUT=1".to_owned());
                d.push(format!("-DOUT_GRADIENT_T={}", number(n)));
            }
            Output::Sectors(n) => {
                d.push("-DOUTPUT=4".to_owned());
                d.push(format!("-DOUT_GRADIENT_T={}", number(n)));
            }
            Output::Direction => d.push("-DOUTPUT=2".to_owned()),
            Output::Direction4 => d.push("-DOUTPUT=3".to_owned()),
        }
        d
    }

    /// The stencil as the filter's gradient kernel (Gx's taps; Gy's are their transpose).
    pub fn kernel(self) -> ConvKernel {
        ConvKernel::gradient("edges", self.stencil())
    }

    /// The `-D` options a filter file (`cuda/conv_*.cu`, `cuda/conv.cuh`) adds to [`Build::defines`] when the edge
    /// command runs it: the stencil as the filter's gradient kernel ([`ConvKernel::gradient`]), its taps given
    /// (conv_constant.cu's constant memory starts with them), and the input packed RGB (`CONV_RGB`).
    pub fn conv_defines(self) -> Vec<String> {
        let kernel = self.kernel();
        let mut d = super::conv::defines(&kernel, true);
        d.push("-DCONV_RGB=1".to_owned());
        d
    }
}
