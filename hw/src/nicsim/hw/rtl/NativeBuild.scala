package nicsim.hw.rtl

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths, StandardCopyOption}
import java.security.MessageDigest
import java.util.function.Supplier
import scala.collection.mutable
import scala.jdk.CollectionConverters._
import spinal.core._

/**
 * nicsim's own Verilator binding, built for speed in RTL-in-the-loop runs: SpinalSim crosses JNI
 * once per signal and needs a thread per simulation, which caps a shadowed block at a few thousand
 * edges a second. Here a block is Verilated into a shared library with a generated C entry point
 * that runs a whole batch of cycles (inputs in, outputs out) in one call, and a small JNI library
 * (built once) opens such libraries and calls them ([[NativeRtl]]). Both C++ sources are files
 * beside this class in `hw/resources/nicsim/hw/rtl`: `shim.cpp` (the JNI library) and
 * `wrapper.cpp.in` (a block's entry points, its `@NAME@` fields filled in per block).
 *
 * Libraries are cached under `~/.cache/nicsim/native` (NICSIM_CACHE moves the root) by a hash of
 * the Verilog, the generated wrapper, the compiler flags and the Verilator version, so a block is
 * compiled once per machine. Tools come from the PATH: `verilator` and `g++`.
 */
object NativeBuild {
  private def cacheRoot: Path = Paths.get(RtlRunner.cacheRoot, "native")

  private def cxxFlags(coverage: Boolean) = Seq("-std=gnu++17", "-O2", "-fPIC", "-faligned-new", "-w",
    s"-DVM_COVERAGE=${if (coverage) 1 else 0}", "-DVM_SC=0", "-DVM_TRACE=0", "-DVM_TRACE_FST=0", "-DVM_TRACE_VCD=0")
  private val CxxFlags = cxxFlags(false)

  /**
   * The flags of one C++ file of a quick build: a coverage build or a netlist of mutants runs a short
   * stimulus, and g++ at -O2 on its Verilated C++ (18 MB for WqeFetcher with coverage) takes minutes.
   * There the model's code is compiled at -O1 (half of -O2's compile time), and Verilator's `__Slow`
   * files (construction, initial values, the coverage points' declarations: run once) at -O0 (a third).
   * A plain build keeps -O2 throughout: whole workloads run on it.
   */
  private def fileFlags(coverage: Boolean, quick: Boolean, file: String): Seq[String] =
    if (!quick) cxxFlags(coverage)
    else cxxFlags(coverage).map(f => if (f != "-O2") f else if (file.endsWith("__Slow.cpp")) "-O0" else "-O1")

  /** What a quick build adds to its cache key (a plain build's key stays what it was: its libraries stay valid). */
  private def quickKey(quick: Boolean): Seq[String] = if (quick) Seq("quick: -O1, __Slow files -O0") else Nil

  /**
   * Verilator's flags for a coverage build: line coverage (each statement block and each arm of an
   * if or case) and toggle coverage (each bit of each signal, counted each time it changes); user coverage
   * (SystemVerilog cover properties) is left out, nicsim's blocks have none.
   */
  private val CoverageFlags = Seq("--coverage-line", "--coverage-toggle")

  /** A block Verilated with a fixed port order; [[open]] gives independent instances. */
  final class Compiled private[NativeBuild] (val name: String, val library: Path, ins: Seq[String], outs: Seq[String],
                                            val coverage: Boolean = false) {
    /** Input ports in record order, by RTL name. */
    def inputs: java.util.List[String] = ins.asJava
    /** Output ports in result order. */
    def outputs: java.util.List[String] = outs.asJava
    def open(): NativeRtl = new NativeRtl(name, library, ins.size, outs.size, coverage)
  }

  private val compiled = mutable.Map[(String, Seq[String], Seq[String], Boolean), Compiled]()

  /**
   * Elaborates `make` and builds (or finds in the cache) its library, with records carrying
   * `inputs` and results carrying `outputs` in the order given, by RTL port name.
   */
  def compile(name: String, make: Supplier[Component], inputs: java.util.List[String],
              outputs: java.util.List[String]): Compiled =
    compile(name, make, inputs, outputs, coverage = false)

  /**
   * As above; with `coverage`, Verilated with line and toggle coverage ([[CoverageFlags]]), cached
   * apart from the plain build, and each instance can write what it covered ([[NativeRtl.writeCoverage]]).
   */
  def compile(name: String, make: Supplier[Component], inputs: java.util.List[String], outputs: java.util.List[String],
              coverage: Boolean): Compiled = synchronized {
    Toolchain.requireRtl()
    val ins = inputs.asScala.toSeq
    val outs = outputs.asScala.toSeq
    compiled.getOrElseUpdate((name, ins, outs, coverage), build(name, make, ins, outs, coverage))
  }

  /**
   * A block of the user's own: Verilog/SystemVerilog `files` whose module `top` must have the ports
   * of the block `make` elaborates (same names, directions and widths: its contract, docs/blocks.md),
   * Verilated with the same entry points, so it runs in the twin's place. A file that does not parse
   * or a port that is missing, of another width or direction is an IllegalArgumentException naming it,
   * before anything is compiled.
   */
  def compileVerilog(name: String, make: Supplier[Component], files: java.util.List[Path], top: String,
                     inputs: java.util.List[String], outputs: java.util.List[String]): Compiled =
    compileVerilog(name, make, files, top, inputs, outputs, coverage = false)

  /** As above, with line and toggle coverage when `coverage` (see [[compile]]). */
  def compileVerilog(name: String, make: Supplier[Component], files: java.util.List[Path], top: String,
                     inputs: java.util.List[String], outputs: java.util.List[String],
                     coverage: Boolean): Compiled =
    compileVerilog(name, make, files, top, inputs, outputs, coverage, java.util.Map.of[String, Integer](), false)

  /** As below, a quick build (see [[fileFlags]]) when `coverage`. */
  def compileVerilog(name: String, make: Supplier[Component], files: java.util.List[Path], top: String,
                     inputs: java.util.List[String], outputs: java.util.List[String],
                     coverage: Boolean, extra: java.util.Map[String, Integer]): Compiled =
    compileVerilog(name, make, files, top, inputs, outputs, coverage, extra, false)

  /**
   * As above, where module `top` also has the input ports `extra` (name to width, at most 64 bits,
   * in record order after `inputs`): ports beyond the block's contract, such as the select of a
   * netlist holding many mutants (Yosys `mutate -ctrl`), which each record drives like the others.
   * With `quick` (or `coverage`) the C++ is compiled for a short stimulus, not a whole workload ([[fileFlags]]).
   */
  def compileVerilog(name: String, make: Supplier[Component], files: java.util.List[Path], top: String,
                     inputs: java.util.List[String], outputs: java.util.List[String],
                     coverage: Boolean, extra: java.util.Map[String, Integer],
                     quick: Boolean): Compiled = synchronized {
    Toolchain.requireRtl()
    val q = quick || coverage
    val more = extra.asScala.toSeq.map { case (n, w) =>
      if (w < 1 || w > 64) throw new IllegalArgumentException(s"extra input $n: width $w must be 1 to 64")
      n -> w.intValue
    }
    val ins = inputs.asScala.toSeq
    val outs = outputs.asScala.toSeq
    val gen = Files.createTempDirectory("nicsim-contract-")
    try {
      val report = Console.withOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream())) {
        nicsim.hw.VerilogFile.config(gen.toString).generateVerilog(make.get())
      }
      val ref = report.toplevel
      val contract = ref.getAllIo.toSeq.map(s => s.getName() -> (s.isInput, s.getBitsWidth)).toMap
      val ios = contract ++ more.map { case (n, w) => n -> (true, w) }
      val clock = ref.clockDomain.clock.getName()
      val reset = Option(ref.clockDomain.reset).map(_.getName())
      val sources = files.asScala.toSeq.map { f =>
        if (!Files.isRegularFile(f)) throw new IllegalArgumentException(s"--verilog $f: no such file")
        f.getFileName.toString -> Files.readString(f)
      }
      val wrapper = wrapperSource(top, clock, reset, ins.map(n => n -> ios(n)._2) ++ more,
        outs.map(n => n -> ios(n)._2), coverage)
      val parts = sources.map { case (n, t) => n + "\u0000" + t } ++
        Seq(top, wrapper, cxxFlags(coverage).mkString(" "), verilatorVersion) ++
        (if (coverage) CoverageFlags else Nil) ++ quickKey(q)
      val key = hash(parts: _*)
      val lib = cached(s"own-$top-$key", s"lib$top.so") { work =>
        for ((n, t) <- sources) Files.writeString(work.resolve(n), t)
        val v = new ProcessBuilder(verilate(sources.map(_._1), top, coverage).asJava).directory(work.toFile)
          .redirectErrorStream(true).start()
        val vOut = new String(v.getInputStream.readAllBytes(), UTF_8)
        if (v.waitFor() != 0) {
          val first = vOut.linesIterator.find(_.startsWith("%Error")).getOrElse(vOut.linesIterator.take(1).mkString)
          throw new IllegalArgumentException(s"--verilog: Verilator cannot build module $top: $first")
        }
        checkPorts(name, top, Files.readString(work.resolve("obj").resolve(s"V$top.h")), ios, clock, reset)
        Files.writeString(work.resolve("wrapper.cpp"), wrapper)
        link(work, top, coverage, q)
      }
      new Compiled(name, lib, ins ++ more.map(_._1), outs, coverage)
    } finally deleteTree(gen)
  }

  /** The ports Verilator's model header declares (VL_IN8(&name,msb,lsb)...), checked against the contract. */
  private def checkPorts(block: String, top: String, header: String, contract: Map[String, (Boolean, Int)],
                         clock: String,
                         reset: Option[String]): Unit = {
    val decl = "VL_(IN|OUT|INOUT)(?:8|16|64|W)?\\(&(\\w+),(\\d+),(\\d+)".r
    val have = decl.findAllMatchIn(header)
      .map(m => m.group(2) -> (m.group(1) == "IN", m.group(3).toInt - m.group(4).toInt + 1)).toMap
    val wants = contract ++ Map(clock -> (true, 1)) ++ reset.map(_ -> (true, 1))
    val wrong = wants.toSeq.sortBy(_._1).flatMap { case (n, (in, w)) =>
      have.get(n) match {
        case None => Some(s"port $n (${if (in) "input" else "output"}, $w bits) is missing")
        case Some((hIn, _)) if hIn != in =>
          Some(s"port $n is an ${if (hIn) "input" else "output"}; the contract has an ${if (in) "input" else "output"}")
        case Some((_, hw)) if hw != w => Some(s"port $n is $hw bits wide; the contract has $w")
        case _ => None
      }
    }
    if (wrong.nonEmpty)
      throw new IllegalArgumentException(
        s"--verilog: module $top does not keep block $block's port contract (docs/blocks.md): " + wrong.mkString("; "))
  }

  private def build(name: String, make: Supplier[Component], ins: Seq[String], outs: Seq[String],
                    coverage: Boolean): Compiled = {
    val gen = Files.createTempDirectory("nicsim-native-")
    try {
      val report = nicsim.hw.VerilogFile.config(gen.toString).generateVerilog(make.get())
      val top = report.toplevel
      val module = report.toplevelName
      val ios = top.getAllIo.toSeq.map(s => s.getName() -> s).toMap
      def port(n: String, input: Boolean): (String, Int) = {
        val s = ios.getOrElse(n, throw new IllegalArgumentException(
          s"RTL block $name has no port '$n' (has ${ios.keys.toSeq.sorted.mkString(", ")})"))
        if (s.isInput != input) {
          val dir = if (s.isInput) "input" else "output"
          throw new IllegalArgumentException(s"RTL block $name: port '$n' is an $dir")
        }
        if (s.getBitsWidth > 64) throw new IllegalArgumentException(
          s"RTL block $name: port '$n' is ${s.getBitsWidth} bits wide; the binding carries at most 64")
        n -> s.getBitsWidth
      }
      val inPorts = ins.map(port(_, input = true))
      val outPorts = outs.map(port(_, input = false))
      val clock = top.clockDomain.clock.getName()
      val reset = Option(top.clockDomain.reset).map(_.getName())
      val verilog = Files.readString(gen.resolve(module + ".v"))
      val wrapper = wrapperSource(module, clock, reset, inPorts, outPorts, coverage)
      val key = hash(Seq(withoutRepoHash(verilog), wrapper, cxxFlags(coverage).mkString(" "), verilatorVersion) ++
        (if (coverage) CoverageFlags else Nil) ++ quickKey(coverage): _*)
      val lib = cached(s"$module-$key", s"lib$module.so") { work =>
        Files.writeString(work.resolve(module + ".v"), verilog)
        Files.writeString(work.resolve("wrapper.cpp"), wrapper)
        exec(work, verilate(Seq(s"$module.v"), module, coverage))
        link(work, module, coverage, coverage)
      }
      new Compiled(name, lib, ins, outs, coverage)
    } finally deleteTree(gen)
  }

  /**
   * `verilog` without the header line SpinalHDL writes with the repository's commit (`// Git hash  : ...`):
   * a cache key over it would change with every commit, and CI would rebuild every block on each one.
   */
  def withoutRepoHash(verilog: String): String = verilog.replaceFirst("(?m)^// Git hash .*\\R", "")

  /** Verilator's command for module `top` of `sources`: C++ into `obj`, classes prefixed V<top>. */
  private def verilate(sources: Seq[String], top: String, coverage: Boolean): Seq[String] =
    Seq("verilator", "--cc") ++ sources ++ Seq("--top-module", top, "--prefix", "V" + top, "--Mdir", "obj",
      "-O3", "-Wno-fatal", "-Wno-lint", "-Wno-style") ++ (if (coverage) CoverageFlags else Nil)

  /**
   * Compiles `obj`'s Verilated C++ and `wrapper.cpp`, a g++ per file on every core (a large block is
   * some twenty files, which one g++ would compile one after another), and links them with Verilator's
   * runtime into lib<top>.so in `work`.
   */
  private def link(work: Path, top: String, coverage: Boolean, quick: Boolean): Unit = {
    val srcs = Files.list(work.resolve("obj")).iterator().asScala.map(_.getFileName.toString)
      .filter(_.endsWith(".cpp")).toSeq.sorted.map("obj/" + _) :+ "wrapper.cpp"
    val include = Seq("-Iobj", s"-I$verilatorInclude", s"-I$verilatorInclude/vltstd")
    val pool = java.util.concurrent.Executors.newFixedThreadPool(Runtime.getRuntime.availableProcessors())
    try {
      val jobs = srcs.map { src =>
        pool.submit(new java.util.concurrent.Callable[String] {
          def call(): String = {
            val obj = src.stripSuffix(".cpp") + ".o"
            exec(work, Seq("g++", "-c") ++ fileFlags(coverage, quick, src) ++ include ++ Seq(src, "-o", obj))
            obj
          }
        })
      }
      val objs = jobs.map { j =>
        try j.get() catch { case e: java.util.concurrent.ExecutionException => throw e.getCause }
      }
      exec(work, Seq("g++", "-shared") ++ objs ++
        Seq(runtime(coverage).toString, "-Wl,-Bsymbolic", "-pthread", "-o", s"lib$top.so"))
    } finally pool.shutdownNow()
  }

  /** The C entry points of one block: make (reset applied), free, run a batch of records. */
  private def wrapperSource(module: String, clock: String, reset: Option[String], ins: Seq[(String, Int)],
                            outs: Seq[(String, Int)], coverage: Boolean): String = {
    val v = "V" + module
    def mask(w: Int) = if (w == 64) "0xffffffffffffffffULL" else f"0x${(1L << w) - 1}%xULL"
    val zero = ins.map { case (n, _) => s"  t->$n = 0;" }.mkString("\n")
    val drive = ins.map { case (n, w) => s"    t->$n = (uint64_t) *r++ & ${mask(w)};" }.mkString("\n")
    val sample = outs.map { case (n, _) => s"    *o++ = (int64_t) (uint64_t) t->$n;" }.mkString("\n")
    val resetOn = reset.map(r => s"  t->$r = 1;").getOrElse("")
    val resetOff = reset.map(r => s"  t->$r = 0;").getOrElse("")
    source("wrapper.cpp.in")
      .replace("@MODULE@", module).replace("@V@", v).replace("@CLOCK@", clock)
      .replace("@ZERO@", zero).replace("@DRIVE@", drive).replace("@SAMPLE@", sample)
      .replace("@RESET_ON@", resetOn).replace("@RESET_OFF@", resetOff)
      // a plain build's wrapper stays byte for byte what it was, so its cached libraries stay valid
      .replace("@COVERAGE@\n", if (coverage) source("coverage.cpp.in").replace("@V@", v) else "")
  }

  /** The JNI library's source (hw/resources/nicsim/hw/rtl/shim.cpp). */
  private lazy val Shim = source("shim.cpp")

  /** A C++ source kept beside this class as a resource (hw/resources/nicsim/hw/rtl). */
  private def source(name: String): String = {
    val in = Option(getClass.getResourceAsStream(name))
      .getOrElse(throw new IllegalStateException(s"RTL binding: resource $name missing from the classpath"))
    try new String(in.readAllBytes(), UTF_8) finally in.close()
  }

  private var bindingLoaded = false

  /** Builds (once per machine) and loads (once per JVM) the JNI library. */
  def loadBinding(): Unit = synchronized {
    if (bindingLoaded) return
    Toolchain.requireRtl()
    val jdk = Paths.get(sys.props("java.home"))
    val include = Seq(jdk.resolve("include"), jdk.getParent.resolve("include"))
      .find(d => Files.exists(d.resolve("jni.h")))
      .getOrElse(throw new IllegalStateException(
        s"RTL binding: jni.h not found under ${jdk.resolve("include")}; a JDK (not a JRE) is needed"))
    val lib = cached(s"jni-${hash(Shim, include.toString)}", "libnicsim_jni.so") { work =>
      Files.writeString(work.resolve("shim.cpp"), Shim)
      exec(work, Seq("g++", "-shared", "-O2", "-fPIC", s"-I$include", s"-I$include/linux", "shim.cpp", "-ldl", "-o",
        "libnicsim_jni.so"))
    }
    System.load(lib.toString)
    bindingLoaded = true
  }

  private lazy val verilatorVersion: String = execOut(Paths.get("."), Seq("verilator", "--version")).trim
  private lazy val verilatorInclude: String =
    execOut(Paths.get("."), Seq("verilator", "--getenv", "VERILATOR_ROOT")).trim + "/include"

  /** Verilator's runtime, compiled once position-independent so every block library can link it in. */
  private def runtime(coverage: Boolean): Path =
    cached(s"verilated-${hash(verilatorVersion, cxxFlags(coverage).mkString(" "))}", "libverilated_pic.a") { work =>
      // a coverage build also needs Verilator's coverage database (verilated_cov.cpp)
      val srcs = Seq("verilated.cpp", "verilated_threads.cpp") ++ (if (coverage) Seq("verilated_cov.cpp") else Nil)
      exec(work, Seq("g++", "-c") ++ cxxFlags(coverage) ++ Seq(s"-I$verilatorInclude", s"-I$verilatorInclude/vltstd") ++
        srcs.map(s => s"$verilatorInclude/$s"))
      exec(work, Seq("ar", "rcs", "libverilated_pic.a") ++ srcs.map(_.replace(".cpp", ".o")))
    }

  /**
   * `cacheRoot/entry/file`, made first if missing: `make` builds `file` in a scratch folder of its
   * own, which is then moved into place atomically, so JVMs building the same entry at once cannot
   * see a half-written file.
   */
  private def cached(entry: String, file: String)(make: Path => Unit): Path = {
    val target = cacheRoot.resolve(entry).resolve(file)
    if (!Files.exists(target)) {
      val work = Files.createDirectories(cacheRoot.resolve(s".build-$entry-${ProcessHandle.current().pid()}"))
      make(work)
      Files.createDirectories(target.getParent)
      Files.move(work.resolve(file), target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
      deleteTree(work)
    }
    target
  }

  private def hash(parts: String*): String = {
    val md = MessageDigest.getInstance("SHA-256")
    for (p <- parts) { md.update(p.getBytes(UTF_8)); md.update(0.toByte) }
    md.digest().take(8).map(b => f"${b & 0xff}%02x").mkString
  }

  private def execOut(dir: Path, cmd: Seq[String]): String = {
    val pb = new ProcessBuilder(cmd.asJava).directory(dir.toFile).redirectErrorStream(true)
    val p = try pb.start() catch {
      case _: java.io.IOException if !Toolchain.onPath(cmd.head) =>
        throw new Toolchain.MissingTool(java.util.List.of(cmd.head))
    }
    val out = new String(p.getInputStream.readAllBytes(), UTF_8)
    if (p.waitFor() != 0)
      throw new IllegalStateException(s"RTL binding: '${cmd.mkString(" ")}' failed in $dir:\n${out.takeRight(4000)}")
    out
  }

  private def exec(dir: Path, cmd: Seq[String]): Unit = execOut(dir, cmd)

  private def deleteTree(p: Path): Unit = if (Files.exists(p)) {
    val paths = Files.walk(p).iterator().asScala.toSeq.reverse
    paths.foreach(Files.deleteIfExists)
  }
}
