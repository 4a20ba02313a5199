// nicsim build (Mill 0.12.17). One module per top-level folder (firmware-model: one per layer, nested);
// dependencies point one way:
//   waveforms <- firmware-model.sim <- .abi <- .platform <- .blocks <- .firmware (see the object's comment),
//   firmware-model.firmware <- host-driver <- serve,   firmware-model.blocks <- hw <- cosim <- sweep,
//   host-driver <- calibrate,   cosim, sweep, serve <- bench,   firmware-model.sim <- mpi,
//   cosim, bench, calibrate, sweep, serve, vm, mpi <- cli (the command line)
// and libnicsim (C) stands alone; serve's and cli's tests run its programs.
// (hw reads the layout definitions firmware-model.blocks owns, so RTL and model share one source).
import mill._, scalalib._

object Versions {
  val scala = "2.13.15"
  val spinal = "1.14.2"
  val jupiter = "5.11.4"
  val commonsCompress = "1.28.0"
  val xz = "1.10"
  val picocli = "4.7.7"
  val xchart = "3.8.8"
  val jackson = "2.15.4" // Spark 3.5's Jackson line: the sweep's TOML reader and Spark share one databind
  val spark = "3.5.8"
  val commonsMath = "3.6.1" // BOBYQA and Brent for nicsim calibrate
}

/** How every Java module compiles: release 17, warnings on. */
trait NicsimJavac extends JavaModule {
  def javacOptions = Seq("--release", "17", "-encoding", "UTF-8", "-Xlint:unchecked", "-Xlint:deprecation")
}

/** Settings shared by every Java module: release 17, warnings on, JUnit 5 tests beside the code. */
trait NicsimJavaModule extends NicsimJavac {
  /** System properties a module's tests need beyond the common ones (cli's: where libnicsim was built). */
  def testProperties: T[Seq[String]] = T { Seq.empty[String] }
  /** Other modules' tests whose helpers this module's tests use (cli's use serve's Served and Programs). */
  def testModuleDeps: Seq[JavaModule] = Seq.empty

  object test extends JavaTests with TestModule.Junit5 {
    override def moduleDeps = super.moduleDeps ++ NicsimJavaModule.this.testModuleDeps
    // keep super.ivyDeps(): it brings the Jupiter runner Mill needs (without it: ClassNotFoundException
    // JupiterTestCollector$Builder)
    def ivyDeps = super.ivyDeps() ++ Agg(ivy"org.junit.jupiter:junit-jupiter:${Versions.jupiter}",
      ivy"org.junit.jupiter:junit-jupiter-params:${Versions.jupiter}")
    // a nested module (firmware-model.sim) gets a workspace of its own too: "firmware-model-sim"
    def forkArgs = T { Seq("-Xmx2g", s"-Dnicsim.root=${T.workspace}") ++ NicsimJavaModule.gc ++
      NicsimJavaModule.simArgs(T.workspace, NicsimJavaModule.this.millModuleSegments.parts.mkString("-")) ++
      NicsimJavaModule.this.testProperties() }
  }
}

object NicsimJavaModule {
  /**
   * The simulator is one thread working through a batch: the throughput collector suits it. Under
   * G1, its write barriers and the old-generation collections of many nodes' in-flight messages
   * cost about 40% of a 64-node run (measured: ./nicsim bench --sections speed, scaling with nodes).
   * The young generation has a fixed size: left to grow, it grew to 1.3 GB within a few runs, and
   * every run that first touched the new part of it paid the kernel for zeroed pages (a write_bw of
   * 64-byte messages took 52x instead of 38x in such a run). Fixed, the pages are touched once,
   * early; a young collection finds little alive (6 MB), so a smaller one costs nearly nothing.
   */
  val gc: Seq[String] = Seq("-XX:+UseParallelGC", "-Xmn512m")

  /** What Spark 3.5 needs to run on Java 17 (the --add-opens its own launcher passes). */
  val sparkOpens: Seq[String] = Seq("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net",
    "java.nio", "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs",
    "sun.security.action", "sun.util.calendar")
    .map(p => s"--add-opens=java.base/$p=ALL-UNNAMED")

  /**
   * SpinalSim's Verilator workspace and model cache for one module's tests: absolute paths outside
   * Mill's per-run sandbox, one per module, because Mill may run two test modules at once and two
   * processes must never share a Verilator build folder.
   */
  def simArgs(root: os.Path, module: String): Seq[String] = Seq(
    s"-Dsim.workspace=${root / "out" / "simWorkspace" / module}",
    s"-Dsim.cache=${sys.env.getOrElse("NICSIM_CACHE", sys.props("user.home") + "/.cache/nicsim")}/spinalsim-$module"
  )
}

/** Scala artifacts all at one version (SpinalHDL pulls in scala-reflect 2.13.12). */
trait PinScala extends JavaModule {
  def mapDependencies = T.task { (d: coursier.Dependency) =>
    if (d.module.organization.value == "org.scala-lang") d.withVersion(Versions.scala) else d
  }
}

object waveforms extends NicsimJavaModule {
  def ivyDeps = Agg(
    ivy"org.apache.commons:commons-compress:${Versions.commonsCompress}",
    ivy"org.tukaani:xz:${Versions.xz}" // optional dependency of commons-compress: needed for .xz
  )
}

/**
 * The model of the adapter, in layers, each a module that sees only the ones below it:
 *   sim       the simulation kernel (nicsim.sim: time, clocks, streams, layouts, traces) and the
 *             profiles (nicsim.profile, resources/nicsim/profiles)
 *   abi       the device's ABI (nicsim.abi), its own codes included (QP states, service types, syndromes)
 *   platform  the simulated host with its PCI model (nicsim.host) and the fabric (nicsim.fabric)
 *   blocks    the adapter's hardware blocks, the Java twins of hw's RTL (nicsim.adapter)
 *   firmware  the firmware on the adapter's embedded processor (nicsim.firmware)
 * `./mill firmware-model.__.test` runs all their tests.
 */
object `firmware-model` extends Module {
  object sim extends NicsimJavaModule {
    def moduleDeps = Seq(waveforms)
  }
  object abi extends NicsimJavaModule {
    def moduleDeps = Seq(sim)
  }
  object platform extends NicsimJavaModule {
    def moduleDeps = Seq(abi)
  }
  object blocks extends NicsimJavaModule {
    def moduleDeps = Seq(platform)
  }
  object firmware extends NicsimJavaModule {
    def moduleDeps = Seq(blocks)
  }
}

object `host-driver` extends NicsimJavaModule {
  def moduleDeps = Seq(`firmware-model`.firmware)
}

object hw extends ScalaModule with PinScala {
  def scalaVersion = Versions.scala
  def moduleDeps = Seq(`firmware-model`.blocks)
  def ivyDeps = Agg(
    ivy"com.github.spinalhdl::spinalhdl-core:${Versions.spinal}",
    ivy"com.github.spinalhdl::spinalhdl-lib:${Versions.spinal}"
  )
  def scalacPluginIvyDeps = Agg(ivy"com.github.spinalhdl::spinalhdl-idsl-plugin:${Versions.spinal}")
  def scalacOptions = Seq("-deprecation", "-feature", "-language:reflectiveCalls")

  /** The typed bundles of the blocks' port layouts (nicsim.adapter.LayoutBundles), written before hw compiles. */
  def generatedSources = T {
    mill.util.Jvm.runSubprocess(
      mainClass = "nicsim.adapter.LayoutBundles",
      classPath = `firmware-model`.blocks.runClasspath().map(_.path),
      mainArgs = Seq(T.dest.toString)
    )
    super.generatedSources() ++ Seq(PathRef(T.dest))
  }

  /** Writes the Verilog of every RTL block into hw/gen-verilog's task folder and returns it. */
  def verilog = T {
    val dest = T.dest
    mill.util.Jvm.runSubprocess(
      mainClass = "nicsim.hw.GenerateVerilog",
      classPath = runClasspath().map(_.path),
      mainArgs = Seq(dest.toString)
    )
    PathRef(dest)
  }

  object test extends ScalaTests with TestModule.ScalaTest with PinScala {
    def ivyDeps = super.ivyDeps() ++ Agg(ivy"org.scalatest::scalatest:3.2.19")
    def forkArgs = Seq("-Xmx2g", s"-Dnicsim.root=${T.workspace}") ++ NicsimJavaModule.simArgs(T.workspace, "hw")
  }
}

/**
 * serve and attach: the simulated adapters offered to other processes, to libibverbs programs (the
 * provider's C sources, libnicsim/provider, are its resources) and to C drivers on the PCI face.
 */
object serve extends NicsimJavaModule {
  def moduleDeps = Seq(`host-driver`)
  // serve --record writes, nicsim replay reads, a gzip-compressed recording
  def ivyDeps = Agg(ivy"org.apache.commons:commons-compress:${Versions.commonsCompress}")
  override def testProperties = T { Seq(s"-Dnicsim.libnicsim=${libnicsim.build().path}") }
  /**
   * The provider's C sources (nicsim/provider) and libnicsim's beside them (nicsim/libnicsim): the
   * provider is built on libnicsim where a program is attached (ProviderBuild).
   */
  def libnicsimResources = T {
    val d = T.dest / "nicsim" / "libnicsim"
    for (src <- libnicsim.sources().take(2)) os.copy(src.path, d, createFolders = true, mergeFolders = true)
    for (src <- libnicsim.provider()) os.copy(src.path, T.dest / "nicsim" / "provider", createFolders = true,
      mergeFolders = true)
    // the kernel driver's udata, which the provider's kern back end speaks (rdma/nicsim-abi.h)
    os.copy(libnicsim.kernelAbi().path, T.dest / "nicsim" / "provider" / "rdma" / "nicsim-abi.h", createFolders = true)
    PathRef(T.dest)
  }
  override def resources = T { super.resources() ++ Seq(libnicsimResources()) }
}

/**
 * `nicsim vm`: boots a QEMU guest on Debian's own kernel, with an initramfs built here from Debian
 * packages (and the kernel module, when `kernel.module` built it), on a node's adapter through the
 * QEMU bridge. Stands alone: it meets serve only through its socket and the bridge program.
 */
object vm extends NicsimJavaModule {
  def ivyDeps = Agg(ivy"org.apache.commons:commons-compress:${Versions.commonsCompress}")
}

/**
 * The thin binding to Open MPI's C library (mpi/native, JNI) through which a run spreads its hosts over
 * processes (docs/architecture.md#across-processes): its one job, so nothing else links MPI. The library
 * is built with mpicc, warning-free (-Wall -Wextra -Werror), and carried as a resource of the module; on a machine
 * without mpicc (libopenmpi-dev) it is left out, and `run --mpi` names the package.
 */
object mpi extends NicsimJavaModule {
  def moduleDeps = Seq(`firmware-model`.sim)
  def nativeSources = T.sources(millSourcePath / "native")
  /** Whether Open MPI's compiler is installed: an input, so the library is built once it is. */
  def mpicc = T.input { os.proc("sh", "-c", "command -v mpicc").call(check = false).exitCode == 0 }
  def nativeLib = T {
    nativeSources()
    val jdk = os.Path(sys.props("java.home"))
    val home = if (os.exists(jdk / "include")) jdk else jdk / os.up
    val out = T.dest / "nicsim" / "mpi" / "libnicsim-mpi.so"
    os.makeDir.all(out / os.up)
    val srcs = os.list(millSourcePath / "native").filter(_.ext == "c")
    // without Open MPI (a machine that never ran ensure-tools --rdma) the rest builds; --mpi then says what is missing
    if (mpicc()) os.proc("mpicc", "-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
      s"-I${home / "include"}", s"-I${home / "include" / "linux"}", srcs, "-o", out, "-ldl").call()
    PathRef(T.dest)
  }
  override def resources = T { super.resources() ++ Seq(nativeLib()) }
}

/** Co-simulation: lockstep, RTL in the loop, and the RTL blocks proved, mutated, covered and priced. */
object cosim extends NicsimJavaModule with PinScala {
  def moduleDeps = Seq(`host-driver`, hw)
  // the tests that run `nicsim cosim --verilog`, `hw cost` and `hw coverage` do it through the command line
  override def testModuleDeps = Seq(cli)
  def ivyDeps = Agg(ivy"com.fasterxml.jackson.core:jackson-databind:${Versions.jackson}") // Yosys's JSON
}

/** `nicsim calibrate`: fits a profile's parameters to perftest's output from real hardware. */
object calibrate extends NicsimJavaModule {
  def moduleDeps = Seq(`host-driver`)
  def ivyDeps = Agg(ivy"org.apache.commons:commons-math3:${Versions.commonsMath}")
}

/**
 * Design-space sweeps: the TOML file's points, run on every core or as an Apache Spark job, into one
 * table and plots. The only module that depends on Spark: on a cluster spark-submit provides Spark, so
 * here it is a compile-time dependency and `sweep.sparkJar` leaves it out; `sweep.withSpark` puts it on
 * the command line's classpath for `./nicsim sweep --spark local[*]`, and the tests have it too.
 */
object sweep extends NicsimJavac with PinScala {
  def moduleDeps = Seq(cosim)
  def ivyDeps = Agg(ivy"org.knowm.xchart:xchart:${Versions.xchart}",
    ivy"com.fasterxml.jackson.dataformat:jackson-dataformat-toml:${Versions.jackson}")
  def compileIvyDeps = Agg(ivy"org.apache.spark:spark-sql_2.13:${Versions.spark}")
  def mainClass = Some("nicsim.cosim.sweep.spark.SweepJob")

  /** Spark logs through log4j: slf4j-simple (a logger nicsim's dependencies bring) would compete with it. */
  def upstreamAssemblyClasspath = T {
    super.upstreamAssemblyClasspath().filterNot(_.path.last.startsWith("slf4j-simple"))
  }

  /** The jar spark-submit takes: nicsim's sweep and its dependencies, without Spark. */
  def sparkJar = T {
    val dest = T.dest / "nicsim-sweep.jar"
    os.copy(assembly().path, dest)
    PathRef(dest)
  }

  /** nicsim's command line with Spark on its classpath. */
  object withSpark extends NicsimJavac with PinScala {
    def moduleDeps = Seq(cli)
    def ivyDeps = Agg(ivy"org.apache.spark:spark-sql_2.13:${Versions.spark}")
    def mainClass = Some("nicsim.cosim.cli.Main")
    def forkArgs = NicsimJavaModule.sparkOpens ++ Seq("-Xmx4g")
    def runClasspath = T { super.runClasspath().filterNot(_.path.last.startsWith("slf4j-simple")) }
  }

  object test extends JavaTests with TestModule.Junit5 with PinScala {
    // the sweep tests that run `nicsim sweep` do it through the command line
    override def moduleDeps = super.moduleDeps ++ Seq(cli)
    def ivyDeps = super.ivyDeps() ++ Agg(ivy"org.junit.jupiter:junit-jupiter:${Versions.jupiter}",
      ivy"org.junit.jupiter:junit-jupiter-params:${Versions.jupiter}",
      ivy"org.apache.spark:spark-sql_2.13:${Versions.spark}")
    // the jar spark-submit would take, built before the tests, which run it as spark-submit does
    def forkArgs = T { Seq("-Xmx2g", s"-Dnicsim.root=${T.workspace}", s"-Dnicsim.sweepJar=${sweep.sparkJar().path}") ++
      NicsimJavaModule.sparkOpens ++ NicsimJavaModule.simArgs(T.workspace, "sweep") }
    def runClasspath = T { super.runClasspath().filterNot(_.path.last.startsWith("slf4j-simple")) }
    // Spark's logging as quiet as on the command line
    def resources = T.sources(sweep.withSpark.millSourcePath / "resources")
  }
}

/** `nicsim bench`: simulated figures against published ones, the simulator's speed and its work per message. */
object bench extends NicsimJavaModule {
  def moduleDeps = Seq(cosim, sweep, serve)
  def ivyDeps = Agg(ivy"org.knowm.xchart:xchart:${Versions.xchart}")
}

/** The command line (`./nicsim`): one picocli command per job, each calling the module that does it. */
object cli extends NicsimJavaModule with PinScala {
  def moduleDeps = Seq(cosim, bench, calibrate, sweep, serve, vm, mpi)
  override def testModuleDeps = Seq(serve.test)
  // the guest test boots the kernel driver and its selftest through the QEMU bridge: built before the tests
  override def testProperties = T { Seq(s"-Dnicsim.kernel.module=${kernel.module().path}",
    s"-Dnicsim.kernel.selftest=${kernel.selftest().path}", s"-Dnicsim.libnicsim=${libnicsim.build().path}") }
  def ivyDeps = Agg(ivy"info.picocli:picocli:${Versions.picocli}")
  def mainClass = Some("nicsim.cosim.cli.Main")
  // The JIT's and the heap's other options stay at their defaults: inlining limits, -TieredCompilation, lower
  // Tier4 thresholds, -Xmn128m, fixed TLABs, pre-touch, fixed survivors, a larger autobox cache, more loop
  // unrolling, each measured alone on the bench's speed rows (CPU a message, alternated rounds, JDK 17): none
  // helped every row by more than the rounds' spread; InlineSmallCode=5000 and FreqInlineSize=650 cost up to 45%
  def forkArgs = Seq("-Xmx4g") ++ NicsimJavaModule.gc
}

/**
 * libnicsim, the C driver on the adapter's PCI face, and its examples: built with the system's cc,
 * warning-free (-Wall -Wextra -Werror), into libnicsim.a and one program per example. Mill keeps
 * the result until a source changes (`./mill show libnicsim.build` prints where it is).
 */
object libnicsim extends Module {
  def sources = T.sources(millSourcePath / "src", millSourcePath / "include", millSourcePath / "examples",
    millSourcePath / "qemu")
  /** The libibverbs provider on libnicsim: built by serve's ProviderBuild, where the program runs. */
  def provider = T.sources(millSourcePath / "provider")
  /** The kernel driver's uverbs udata (kernel/include/uapi), which the provider's kern back end includes. */
  def kernelAbi = T.source(millSourcePath / os.up / "kernel" / "include" / "uapi" / "rdma" / "nicsim-abi.h")
  def build = T {
    sources()
    val flags = Seq("-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror", s"-I${millSourcePath / "include"}")
    val objects = for (c <- os.list(millSourcePath / "src") if c.ext == "c") yield {
      val o = T.dest / s"${c.baseName}.o"
      os.proc("cc", flags, "-fPIC", "-c", c, "-o", o).call()
      o
    }
    val lib = T.dest / "libnicsim.a"
    os.proc("ar", "rcs", lib, objects).call()
    for (e <- os.list(millSourcePath / "examples") if e.ext == "c")
      os.proc("cc", flags, e, lib, "-o", T.dest / e.baseName).call()
    // the QEMU bridge: one node's adapter as a guest's PCI function (libnicsim/qemu/remote.c)
    val bridge = os.list(millSourcePath / "qemu").filter(_.ext == "c")
    os.proc("cc", flags, bridge, lib, "-o", T.dest / "nicsim-qemu-remote").call()
    PathRef(T.dest)
  }
}

/**
 * nicsim_ib, the Linux RDMA driver of the adapter (kernel/, docs/kernel.md), built by kbuild against
 * Debian's linux-headers for the guest's kernel (its release in kernel/RELEASE; `scripts/ensure-tools.sh
 * --kernel` installs them) into `out/kernel/module.dest/nicsim_ib.ko`: warning-free (-Werror in its
 * Makefile) and clean under the kernel's own checkpatch.pl --strict. Its test checks the module's
 * modinfo and holds the driver's device constants to the device's ABI code.
 */
object kernel extends NicsimJavaModule {
  def moduleDeps = Seq(`host-driver`)
  def driverSources = T.sources(moduleDir / "drivers", moduleDir / "include", moduleDir / "selftest",
    moduleDir / "RELEASE")
  def release = T { driverSources(); os.read(moduleDir / "RELEASE").trim }
  private def missing(what: String) =
    new Exception(s"kernel.module: $what: run scripts/ensure-tools.sh --kernel (as root it installs them)")

  /** The kernel's scripts/checkpatch.pl (and the lists it reads beside it), from Debian's linux-source. */
  def checkpatch = T {
    val series = release().split('.').take(2).mkString(".")
    val tarball = os.Path(s"/usr/src/linux-source-$series.tar.xz")
    if (!os.exists(tarball)) throw missing(s"no $tarball (Debian's linux-source-$series)")
    val files = Seq("checkpatch.pl", "spelling.txt", "const_structs.checkpatch")
      .map(f => s"linux-source-$series/scripts/$f")
    os.proc("tar", "-xJf", tarball, "-C", T.dest, files).call()
    PathRef(T.dest / s"linux-source-$series" / "scripts" / "checkpatch.pl")
  }

  def module = T {
    driverSources()
    val headers = os.Path(s"/usr/src/linux-headers-${release()}")
    if (!os.exists(headers / "Makefile")) throw missing(s"no kernel headers at $headers")
    // kbuild writes its objects beside the sources: build a copy in the kernel tree's layout
    val tree = T.dest / "tree"
    os.remove.all(tree)
    for (d <- Seq("drivers", "include")) os.copy(moduleDir / d, tree / d, createFolders = true)
    val driver = tree / "drivers" / "infiniband" / "hw" / "nicsim"
    val make = os.proc("make", "-C", headers, s"M=$driver", "modules")
      .call(check = false, mergeErrIntoOut = true, stdout = os.Pipe)
    val log = make.out.text()
    if (make.exitCode != 0 || log.contains("warning:"))
      throw new Exception(s"kernel.module: kbuild failed or warned (exit ${make.exitCode}):\n$log")
    val sources = Seq("drivers", "include", "selftest").flatMap(d => os.walk(moduleDir / d)).filter(os.isFile(_))
    val check = os.proc("perl", checkpatch().path, "--no-tree", "--strict", "--terse", "--show-types", "-f", sources)
      .call(cwd = moduleDir, check = false, mergeErrIntoOut = true, stdout = os.Pipe)
    val report = check.out.text()
    if (check.exitCode != 0 || !report.linesIterator.forall(_.contains("total: 0 errors, 0 warnings, 0 checks")))
      throw new Exception(s"kernel.module: checkpatch.pl --strict found problems:\n$report")
    os.copy.over(driver / "nicsim_ib.ko", T.dest / "nicsim_ib.ko")
    PathRef(T.dest / "nicsim_ib.ko")
  }

  /**
   * nicsim_selftest.ko (kernel/selftest): a kernel consumer that, loaded in a guest beside nicsim_ib, moves
   * bytes through the device with SEND, RDMA WRITE and a completion event and logs PASS or FAIL.
   */
  def selftest = T {
    driverSources()
    val headers = os.Path(s"/usr/src/linux-headers-${release()}")
    if (!os.exists(headers / "Makefile")) throw missing(s"no kernel headers at $headers")
    os.remove.all(T.dest / "src")
    os.copy(moduleDir / "selftest", T.dest / "src", createFolders = true)
    val make = os.proc("make", "-C", headers, s"M=${T.dest / "src"}", "modules")
      .call(check = false, mergeErrIntoOut = true, stdout = os.Pipe)
    val log = make.out.text()
    if (make.exitCode != 0 || log.contains("warning:"))
      throw new Exception(s"kernel.selftest: kbuild failed or warned (exit ${make.exitCode}):\n$log")
    os.copy.over(T.dest / "src" / "nicsim_selftest.ko", T.dest / "nicsim_selftest.ko")
    PathRef(T.dest / "nicsim_selftest.ko")
  }

  override def testProperties = T { Seq(s"-Dnicsim.kernel.module=${module().path}") }
}
