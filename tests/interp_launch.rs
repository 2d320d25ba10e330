//! Launch specifications (`amdgpu-cg run`): JSON and flag forms, end-to-end
//! runs, output format and error messages.

use amdgpu_cg::abi::Type;
use amdgpu_cg::mir::launch::{run, ArgSpec, BufferInit, LaunchSpec};
use amdgpu_cg::mir::{parse, Module};

const SAXPY: &str = "kernel @saxpy(%n: i32, %a: f32, %x: ptr<global>, %y: ptr<global>) {
entry:
  %lid = workitem_id x
  %gid = workgroup_id x
  %size = workgroup_size x
  %base = mul i32 %gid, %size
  %i = add i32 %base, %lid
  %in = icmp slt i32 %i, %n
  brif %in, body, done
body:
  %off = mul i32 %i, 4
  %px = ptradd %x, %off
  %py = ptradd %y, %off
  %vx = load f32 %px
  %vy = load f32 %py
  %r = fma f32 %a, %vx, %vy
  store f32 %r, %py
  br done
done:
  ret
}
";

fn saxpy() -> Module {
    parse(SAXPY).unwrap()
}

#[test]
fn json_form_parses() {
    let spec = LaunchSpec::from_json(
        r#"{"kernel":"saxpy","grid":[256,1,1],"block":[64,1,1],
            "buffers":{"x":{"type":"f32","data":[1,2,3]},"y":{"type":"f32","len":256,"fill":1.5},"z":{"type":"i32","len":256,"iota":true},"w":{"type":"i8","len":4}},
            "args":{"n":256,"a":2.0,"x":"@x","y":"@y"},"print":["y"]}"#,
    )
    .unwrap();
    assert_eq!(spec.kernel.as_deref(), Some("saxpy"));
    assert_eq!((spec.grid, spec.block), ([256, 1, 1], [64, 1, 1]));
    let names: Vec<&str> = spec.buffers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["x", "y", "z", "w"], "declaration order is kept");
    assert_eq!(spec.buffers[0].init, BufferInit::Data(vec!["1".into(), "2".into(), "3".into()]));
    assert_eq!(spec.buffers[1].init, BufferInit::Fill { value: "1.5".into(), len: 256 });
    assert_eq!(spec.buffers[2].init, BufferInit::Iota { len: 256 });
    assert_eq!(spec.buffers[3].init, BufferInit::Fill { value: "0".into(), len: 4 });
    assert_eq!(spec.buffers[2].ty, Type::I32);
    assert_eq!(spec.args[0], ("n".to_string(), ArgSpec::Value("256".into())));
    assert_eq!(spec.args[1], ("a".to_string(), ArgSpec::Value("2.0".into())));
    assert_eq!(spec.args[2], ("x".to_string(), ArgSpec::Buffer("x".into())));
    assert_eq!(spec.print, vec!["y".to_string()]);
    // Sizes may be plain numbers; kernel and print may be omitted.
    let spec = LaunchSpec::from_json(r#"{"grid":128,"block":[32],"args":{"v":[1,"2",3.5]}}"#).unwrap();
    assert_eq!((spec.grid, spec.block, spec.kernel), ([128, 1, 1], [32, 1, 1], None));
    assert_eq!(spec.args[0].1, ArgSpec::List(vec![ArgSpec::Value("1".into()), ArgSpec::Value("2".into()), ArgSpec::Value("3.5".into())]));
}

#[test]
fn flag_form_parses_like_json() {
    let flags = LaunchSpec::from_flags(
        "256",
        "64",
        &["x=f32:1,2,3".into(), "y=f32:fill:1.5:256".into(), "z=i32:iota:256".into(), "w=i8:zero:4".into()],
        &["n=256".into(), "a=2.0".into(), "x=@x".into(), "y=@y".into()],
        &["y".into()],
    )
    .unwrap();
    let json = LaunchSpec::from_json(
        r#"{"grid":256,"block":64,"buffers":{"x":{"type":"f32","data":[1,2,3]},"y":{"type":"f32","len":256,"fill":1.5},
            "z":{"type":"i32","len":256,"iota":true},"w":{"type":"i8","len":4}},"args":{"n":256,"a":"2.0","x":"@x","y":"@y"},"print":["y"]}"#,
    )
    .unwrap();
    assert_eq!(flags, json);
    let spec = LaunchSpec::from_flags("16x16", "8,8,1", &[], &["v=1,2".into(), "s=[1,[2,3]]".into()], &[]).unwrap();
    assert_eq!((spec.grid, spec.block), ([16, 16, 1], [8, 8, 1]));
    assert_eq!(spec.args[0].1, ArgSpec::List(vec![ArgSpec::Value("1".into()), ArgSpec::Value("2".into())]));
    assert!(matches!(&spec.args[1].1, ArgSpec::List(items) if items.len() == 2));
}

#[test]
fn runs_saxpy_and_prints_buffers() {
    let spec = LaunchSpec::from_json(
        r#"{"kernel":"saxpy","grid":8,"block":4,
            "buffers":{"x":{"type":"f32","iota":true,"len":8},"y":{"type":"f32","data":[0.5,0.5,0.5,0.5,0.5,0.5,0.5,"0.1"]}},
            "args":{"n":7,"a":2.0,"x":"@x","y":"@y"},"print":["y"]}"#,
    )
    .unwrap();
    let out = run(&saxpy(), &spec).unwrap();
    let want: Vec<f32> = (0..8).map(|i| if i < 7 { 2.0f32.mul_add(i as f32, 0.5) } else { 0.1 }).collect();
    let got: Vec<f32> = out.buffer("y").unwrap().bits().iter().map(|&b| f32::from_bits(b as u32)).collect();
    assert_eq!(got, want);
    let text = out.to_string();
    let mut lines = text.lines();
    let elems: Vec<String> = want.iter().map(|v| format!("{v:?}")).collect();
    let first = lines.next().unwrap();
    assert_eq!(first, format!("y: f32[8] = [{}]", elems.join(", ")));
    assert_eq!(first, "y: f32[8] = [0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 12.5, 0.1]");
    let stats = lines.next().unwrap();
    assert!(stats.starts_with("stats: ") && stats.contains("8 work-items, 2 work-groups"), "{stats}");
    assert_eq!(out.stats.work_items, 8);
    // Default print: every buffer in declaration order.
    let mut spec = spec;
    spec.print.clear();
    let text = run(&saxpy(), &spec).unwrap().to_string();
    assert!(text.starts_with("x: f32[8] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]\ny: f32[8]"), "{text}");
}

#[test]
fn element_formatting() {
    let m = parse("kernel @k(%p: ptr<global>) {\nentry:\n  ret\n}\n").unwrap();
    let spec = LaunchSpec::from_flags(
        "1",
        "1",
        &["h=f16:0.1,65504,-0,nan,inf,0x0001".into(), "b=i8:255,-128,7".into(), "d=f64:0.1,1e300".into(), "q=i64:-1".into()],
        &["p=@h".into()],
        &[],
    )
    .unwrap();
    let text = run(&m, &spec).unwrap().to_string();
    // Shortest text that reads back as the same f16: 65500 rounds to 65504.
    assert!(text.contains("h: f16[6] = [0.1, 65500.0, -0.0, NaN, inf, 6e-8]"), "{text}");
    assert!(text.contains("b: i8[3] = [-1, -128, 7]"), "{text}");
    assert!(text.contains("d: f64[2] = [0.1, 1e300]"), "{text}");
    assert!(text.contains("q: i64[1] = [-1]"), "{text}");
}

#[test]
fn vector_and_struct_arguments() {
    let m = parse(
        "kernel @k(%v: <2 x i32>, %s: {f32, i64}, %out: ptr<global>) {
entry:
  %a = extract %v, 0
  %b = extract %v, 1
  %c = add i32 %a, %b
  store i32 %c, %out
  %f = extract %s, 0
  %g = extract %s, 1
  %o1 = ptradd %out, 4
  store f32 %f, %o1
  %o2 = ptradd %out, 8
  store i64 %g, %o2
  ret
}
",
    )
    .unwrap();
    let spec = LaunchSpec::from_json(
        r#"{"grid":1,"block":1,"buffers":{"out":{"type":"i32","len":4}},"args":{"v":[40,2],"s":[1.5,-3],"out":"@out"}}"#,
    )
    .unwrap();
    let out = run(&m, &spec).unwrap();
    let bits = out.buffer("out").unwrap().bits();
    assert_eq!(bits[0], 42);
    assert_eq!(bits[1] as u32, 1.5f32.to_bits());
    assert_eq!(bits[2] | (bits[3] << 32), (-3i64) as u64);
}

fn err(json: &str) -> String {
    match LaunchSpec::from_json(json) {
        Err(e) => e,
        Ok(spec) => run(&saxpy(), &spec).expect_err("expected an error"),
    }
}

const BUFS: &str = r#""buffers":{"x":{"type":"f32","len":64},"y":{"type":"f32","len":64}}"#;

#[test]
fn errors_are_messages() {
    let ok_args = r#""args":{"n":64,"a":1,"x":"@x","y":"@y"}"#;
    let e = err(&format!(r#"{{"kernel":"nope","grid":64,"block":64,{BUFS},{ok_args}}}"#));
    assert!(e.contains("no kernel named '@nope'") && e.contains("@saxpy"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},"args":{{"n":64,"x":"@x","y":"@y"}}}}"#));
    assert!(e.contains("missing argument for parameter 'a: f32'"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},"args":{{"n":64,"a":1,"x":"@x","y":"@y","q":3}}}}"#));
    assert!(e.contains("no parameter named 'q'"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},"args":{{"n":"@x","a":1,"x":"@x","y":"@y"}}}}"#));
    assert!(e.contains("argument 'n'") && e.contains("not a pointer"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},"args":{{"n":64,"a":1,"x":5,"y":"@y"}}}}"#));
    assert!(e.contains("argument 'x'") && e.contains("buffer"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},"args":{{"n":64,"a":1,"x":"@nope","y":"@y"}}}}"#));
    assert!(e.contains("'@nope'") && e.contains("no buffer"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},{ok_args},"print":["zz"]}}"#));
    assert!(e.contains("cannot print 'zz'"), "{e}");
    let e = err(&format!(r#"{{"grid":100,"block":64,{BUFS},{ok_args}}}"#));
    assert!(e.contains("not a multiple"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},"args":{{"n":1e3,"a":1,"x":"@x","y":"@y"}}}}"#));
    assert!(e.contains("argument 'n'") && e.contains("not an integer"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},"args":{{"n":[1,2],"a":1,"x":"@x","y":"@y"}}}}"#));
    assert!(e.contains("argument 'n'") && e.contains("list"), "{e}");
    let e = err(&format!(r#"{{"grid":64,"block":64,{BUFS},"args":{{"n":4294967296,"a":1,"x":"@x","y":"@y"}}}}"#));
    assert!(e.contains("does not fit in i32"), "{e}");
    assert!(err(r#"{"grid":64,"block":64,"bufers":{}}"#).contains("unknown field"));
    assert!(err(r#"{"grid":64}"#).contains("block"));
    assert!(err(r#"{"grid":[1,2,3,4],"block":1}"#).contains("1 to 3"));
    assert!(err(r#"{"grid":64,"block":64,"buffers":{"x":{"type":"f33","len":1}}}"#).contains("f33"));
    assert!(err(r#"{"grid":64,"block":64,"buffers":{"x":{"type":"ptr","len":1}}}"#).contains("buffer elements"));
    assert!(err(r#"{"grid":64,"block":64,"buffers":{"x":{"type":"i8","data":[300]}}}"#).contains("does not fit in i8"));
    assert!(err(r#"{"grid":64,"block":64,"buffers":{"x":{"type":"f32","data":[1],"len":2}}}"#).contains("len"));
    assert!(err(r#"{"grid":64,"block":64,"buffers":{"x":{"type":"f32","fill":1}}}"#).contains("needs \"len\""));
    assert!(err(r#"{"grid":64,"block":64,"buffers":{"x":{"type":"f32","len":1},"x":{"type":"f32","len":1}}}"#).contains("duplicate"));
    assert!(err(r#"{"grid":64,"block":64,"#).contains("launch JSON"));
    assert!(err(r#"{"grid":64,"block":64,"buffers":{"x":{"type":"f32","data":["abc"]}}}"#).contains("not a f32 number"));
    // Flag errors.
    let flags = |grid: &str, bufs: &[&str], args: &[&str]| {
        let bufs: Vec<String> = bufs.iter().map(|s| s.to_string()).collect();
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        LaunchSpec::from_flags(grid, "1", &bufs, &args, &[]).unwrap_err()
    };
    assert!(flags("abc", &[], &[]).contains("--grid"));
    assert!(flags("1", &["x"], &[]).contains("NAME=TYPE"));
    assert!(flags("1", &["x=f32:fill:1"], &[]).contains("fill:VALUE:LEN"));
    assert!(flags("1", &["x=f32:iota:many"], &[]).contains("length"));
    assert!(flags("1", &["x=f32:1", "x=f32:2"], &[]).contains("more than once"));
    assert!(flags("1", &[], &["n"]).contains("NAME=VALUE"));
    assert!(flags("1", &[], &["n=@nobuf"]).contains("no buffer"));
    // A module that does not verify, and kernel selection.
    let bad = parse("kernel @k() {\nentry:\n  %x = add i32 1, 2\n  ret %x\n}\n").unwrap();
    let spec = LaunchSpec::from_flags("1", "1", &[], &[], &[]).unwrap();
    assert!(run(&bad, &spec).unwrap_err().contains("does not verify"));
    let two = parse("kernel @a() {\nentry:\n  ret\n}\nkernel @b() {\nentry:\n  ret\n}\n").unwrap();
    assert!(run(&two, &spec).unwrap_err().contains("several kernels"));
    let mut named = spec.clone();
    named.kernel = Some("b".into());
    assert_eq!(run(&two, &named).unwrap().kernel, "b");
    // Run-time errors come back as the interpreter's message.
    let div = parse("kernel @k(%n: i32) {\nentry:\n  %x = sdiv i32 1, %n\n  ret\n}\n").unwrap();
    let spec = LaunchSpec::from_flags("1", "1", &[], &["n=0".into()], &[]).unwrap();
    let e = run(&div, &spec).unwrap_err();
    assert!(e.contains("division by zero") && e.contains("`%x = sdiv i32 1, %n`"), "{e}");
    let spin = parse("kernel @k() {\nentry:\n  br l\nl:\n  br l\n}\n").unwrap();
    let mut spec = LaunchSpec::from_flags("1", "1", &[], &[], &[]).unwrap();
    spec.max_instructions = Some(1000);
    assert!(run(&spin, &spec).unwrap_err().contains("instruction limit"));
}
