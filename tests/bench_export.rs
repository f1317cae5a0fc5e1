//! The benchmark's exports on a fixed, hand-made set of results (snapshots in tests/snapshots/;
//! `cargo insta review` or `INSTA_UPDATE=always` to accept a deliberate change), and the whole
//! `bench --quick` run producing every file.

mod common;

use cuda_sobel::bench::wait::WaitSeries;
use cuda_sobel::bench::StudentSeries;
use cuda_sobel::bench::{
    export, BatchRow, BenchResults, HostInfo, HostSeries, KernelSeries, Meta, Peer, PeerSeries, PipelineSeries,
    RunTimings, Skipped,
};
use cuda_sobel::gpu::DeviceInfo;
use cuda_sobel::sobel::Filter;
use cuda_sobel::variant::{Mapping, Variant, N1};

fn runs(io: f64, mem: Option<f64>, compute: &[f64]) -> Vec<RunTimings> {
    compute
        .iter()
        .map(|&c| RunTimings {
            io_ms: io,
            gpu_memory_ms: mem,
            compute_ms: c,
            total_ms: io + mem.unwrap_or(0.0) + c,
            effective_gbps: None,
        })
        .collect()
}

fn fixture() -> BenchResults {
    let size = (2048, 1024);
    // gpu-n1's series carry their n in the variant, and in `n` for the exports.
    let n1 = |variant: Variant, n: Option<u32>| n.map_or(variant, |n| variant.with_n1(N1::new(n)));
    let p = |variant, n, mem, compute: &[f64]| PipelineSeries {
        width: size.0,
        height: size.1,
        variant: n1(variant, n),
        n,
        runs: runs(20.0, mem, compute),
    };
    let k = |variant, n, samples: &[f64]| KernelSeries {
        width: size.0,
        height: size.1,
        variant: n1(variant, n),
        n,
        buffer_copies: if variant == Variant::CpuScalar { 1 } else { 12 },
        samples_ms: samples.to_vec(),
    };
    BenchResults {
        meta: Meta {
            tool_version: "0.1.0".into(),
            git_commit: "0123456789ab".into(),
            started_unix_s: 1_795_000_000,
            host: HostInfo { cpu: "Test CPU".into(), threads: 16, os: "linux x86_64".into() },
            gpu: Some(DeviceInfo {
                name: "Test GPU".into(),
                compute_capability: "9.0".into(),
                multiprocessors: 132,
                memory_bytes: 150_000_000_000,
                l2_bytes: 62_914_560,
                driver_version: "CUDA 13.0".into(),
            }),
            context_init_ms: Some(100.0),
            kernel_load_ms: Some(5.0),
            copy_bandwidth_gbps: Some(4000.0),
            launch_overhead_us: Some(2.5),
            pinned_h2d_gbps: Some(50.0),
            pinned_d2h_gbps: Some(40.0),
            filter: Filter::default(),
            canny: None,
            runs: 3,
            kernel_reps: 4,
        },
        pipeline: vec![
            p(Variant::CpuScalar, None, None, &[40.0, 42.0, 44.0]),
            p(Variant::GpuMap, None, Some(2.0), &[0.05, 0.06, 0.07]),
            p(Variant::GpuFusedMap, None, Some(1.5), &[0.03, 0.03, 0.03]),
            p(Variant::GpuN1(N1::ONE), Some(1), Some(1.5), &[0.04, 0.04, 0.04]),
            p(Variant::GpuN1(N1::ONE), Some(4), Some(1.5), &[0.02, 0.02, 0.02]),
        ],
        kernels: vec![
            k(Variant::CpuScalar, None, &[40.0, 41.0, 42.0, 43.0]),
            k(Variant::GpuMap, None, &[0.05, 0.05, 0.06, 0.06]),
            k(Variant::GpuFusedMap, None, &[0.03, 0.03, 0.03, 0.03]),
            k(Variant::GpuN1(N1::ONE), Some(1), &[0.04, 0.04, 0.04, 0.04]),
            k(Variant::GpuN1(N1::ONE), Some(4), &[0.008, 0.008, 0.008, 0.008]),
        ],
        skipped: vec![Skipped { variant: Variant::GpuFused, reason: "left out of this fixture".into() }],
        peers: vec![PeerSeries {
            width: size.0,
            height: size.1,
            peer: Peer::Npp,
            description: "NPP (fixture)".into(),
            samples_ms: vec![0.02, 0.02, 0.02],
        }],
        peers_skipped: vec![],
        host_to_host: vec![HostSeries {
            width: size.0,
            height: size.1,
            streams: 4,
            band_rows: 64,
            samples_ms: vec![0.5, 0.4, 0.6],
            pcie_bound_ms: 0.2,
        }],
        batch: Some(BatchRow {
            images: 200,
            width: 2048,
            height: 1024,
            engine: "fixture".into(),
            batch_images_per_s: vec![280.0, 290.0, 285.0],
            baseline_images_per_s: vec![300.0, 290.0, 295.0],
        }),
        report_mapping: vec![
            k(Variant::GpuN1(N1 { n: 1, mapping: Mapping::Report }), Some(1), &[0.08, 0.08, 0.09, 0.08]),
            k(Variant::GpuN1(N1 { n: 4, mapping: Mapping::Report }), Some(4), &[0.2, 0.2, 0.21, 0.2]),
        ],
        wait: vec![
            WaitSeries {
                width: 2048,
                height: 1024,
                variant: "gpu-strip".into(),
                start: "cold",
                samples_s: vec![1.2, 1.4, 1.3],
                note: None,
            },
            WaitSeries {
                width: 2048,
                height: 1024,
                variant: "auto".into(),
                start: "warm",
                samples_s: vec![0.04, 0.05, 0.045],
                note: Some("GPU unavailable: fixture".into()),
            },
        ],
        student: vec![StudentSeries {
            width: 2048,
            height: 1024,
            label: "student:mine.cu".into(),
            samples_ms: vec![0.04, 0.041, 0.039],
        }],
        opencv: vec![],
        opencv_skipped: Some("python3 with cv2 is needed: ModuleNotFoundError: No module named 'cv2'".into()),
    }
}

#[test]
fn markdown_tables() {
    insta::assert_snapshot!(export::markdown(&fixture()));
}

#[test]
fn csv_rows() {
    insta::assert_snapshot!(export::csv(&fixture()).unwrap());
}

#[test]
fn json_document() {
    insta::assert_snapshot!(export::json(&fixture()));
}

#[test]
fn plots_are_svg_with_every_series() {
    let dir = tempfile::tempdir().unwrap();
    let written = export::write_all(&fixture(), dir.path()).unwrap();
    assert_eq!(written.len(), 8);
    let svg = std::fs::read_to_string(dir.path().join("computation_vs_size.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    for label in ["cpu-scalar", "gpu-map", "gpu-fused-map", "gpu-n1 n=1", "roofline", "NPP (peer)"] {
        assert!(svg.contains(label), "legend names {label}");
    }
    let sweep = std::fs::read_to_string(dir.path().join("n_sweep.svg")).unwrap();
    assert!(sweep.contains("2048x1024"));
    // The roofline picture of the fixture's one size: a bar per GPU series, the copy bandwidth as the line.
    let roofline = std::fs::read_to_string(dir.path().join("roofline_2048x1024.svg")).unwrap();
    for label in ["gpu-map", "gpu-fused-map", "gpu-n1 n=4", "copy bandwidth 4000 GB/s"] {
        assert!(roofline.contains(label), "roofline names {label}");
    }
    assert!(!roofline.contains("cpu-scalar"), "only GPU series are held to the GPU's bandwidth");
}

#[test]
fn bench_quick_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    common::bin()
        .args(["bench", "--quick", "--out"])
        .arg(&out)
        .arg("--images")
        .arg(dir.path().join("images"))
        .assert()
        .success()
        .stdout(predicates::str::contains("Time (mean ± σ)"))
        .stdout(predicates::str::contains("times faster than"));
    for name in [
        "results.json",
        "results.csv",
        "results.md",
        "pipeline_vs_size.svg",
        "computation_vs_size.svg",
        "n_sweep.svg",
        "fusion_vs_map.svg",
        "roofline_161x97.svg",
    ] {
        assert!(out.join(name).metadata().map(|m| m.len() > 0).unwrap_or(false), "{name} written");
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let pipeline = json["pipeline"].as_array().unwrap();
    // Two sizes × (the CPU variants, or with a GPU also every GPU variant, gpu-n1 once per n = 1, 2, 4).
    let cpu = Variant::EDGES.iter().filter(|v| !v.is_gpu()).count();
    let gpu = Variant::EDGES.iter().filter(|v| v.is_gpu() && v.n1().is_none()).count() + 3;
    assert!(pipeline.len() == 2 * cpu || pipeline.len() == 2 * (cpu + gpu), "{} series", pipeline.len());
    assert!(pipeline.iter().all(|s| s["runs"].as_array().unwrap().len() == 2));
    // What you wait for: three commands × cold and warm, two whole processes each, on the larger size; then
    // the floor, gpu-strip warm on a 1×1 image.
    // A gpu-strip command that cannot use a GPU is not timed: its rows say why instead of timing the CPU.
    let wait = json["wait"].as_array().unwrap();
    assert_eq!(wait.len(), 7, "{wait:?}");
    for w in wait {
        let samples = w["samples_s"].as_array().unwrap();
        let skipped = w["note"].as_str().is_some_and(|n| n.contains("skipped: GPU unavailable"));
        if skipped {
            assert!(samples.is_empty() && w["variant"] == "gpu-strip", "{w}");
        } else {
            assert_eq!(samples.len(), 2, "{w}");
            assert!(samples.iter().all(|t| t.as_f64().unwrap() > 0.0));
        }
    }
    let has_gpu = cuda_sobel::engine::Engine::device_count() > 0;
    let gpu_rows = wait.iter().filter(|w| w["variant"] == "gpu-strip");
    assert!(gpu_rows.clone().all(|w| w["samples_s"].as_array().unwrap().is_empty() != has_gpu), "{wait:?}");
    assert!(wait[..6].iter().all(|w| w["width"] == 161));
    let floor = &wait[6];
    assert_eq!((&floor["width"], &floor["variant"], &floor["start"]), (&1.into(), &"gpu-strip".into(), &"warm".into()));
    assert!(floor["note"].as_str().unwrap().contains("1×1 image: the floor"), "{floor}");
    assert!(json["meta"]["git_commit"].as_str().unwrap().len() >= 7);
    assert!(dir.path().join("images/64x48.png").is_file(), "sizes not in imgs_in are drawn on demand");
}

/// `--kernel-only` (for tuning): computation alone for every variant and size, each output still checked, and
/// nothing else — no whole-pipeline runs, no host → host runs, no OpenCV row, no whole commands.
#[test]
fn bench_kernel_only_times_the_computation_alone() {
    use predicates::prelude::PredicateBooleanExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    common::bin()
        .args(["bench", "--kernel-only", "--variant", "cpu-scalar,cpu-rayon,gpu-strip", "--sizes", "64x48,33x17"])
        .args(["--kernel-reps", "3", "--out"])
        .arg(&out)
        .arg("--images")
        .arg(dir.path().join("images"))
        .assert()
        .success()
        .stdout(predicates::str::contains("Computation alone"))
        .stdout(predicates::str::contains("Time (mean ± σ)").not())
        .stdout(predicates::str::contains("What you wait for").not())
        .stdout(predicates::str::contains("host → host").not());
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let kernels = json["kernels"].as_array().unwrap();
    let has_gpu = cuda_sobel::engine::Engine::device_count() > 0;
    assert_eq!(kernels.len(), 2 * if has_gpu { 3 } else { 2 }, "{kernels:?}");
    assert!(kernels.iter().all(|k| k["samples_ms"].as_array().unwrap().len() == 3), "{kernels:?}");
    assert!(json["pipeline"].as_array().unwrap().iter().all(|s| s["runs"].as_array().unwrap().is_empty()));
    assert!(json["wait"].as_array().unwrap().is_empty() && json["host_to_host"].as_array().unwrap().is_empty());
    assert_eq!(json["opencv_skipped"], "--kernel-only");
}
