package nicsim.hw.rtl

import java.nio.file.Paths
import java.util.function.{Consumer, Supplier}
import scala.collection.mutable
import scala.jdk.CollectionConverters._
import spinal.core._
import spinal.core.sim._

/**
 * The thin adapter between Java and SpinalSim's Verilator backend: compiles a component (Verilated
 * models are cached by a hash of their Verilog under the cache folder) and runs Java code against
 * it through [[RtlHandle]], so the co-simulation runner stays plain Java.
 */
object RtlRunner {
  /** Workspace for Verilator builds: -Dsim.workspace, else ~/.cache/nicsim/simWorkspace. */
  def workspace: String = sys.props.getOrElse("sim.workspace", cacheRoot + "/simWorkspace")

  /** SpinalSim's model cache: -Dsim.cache, else ~/.cache/nicsim/spinalsim (NICSIM_CACHE moves the root). */
  def cache: String = sys.props.getOrElse("sim.cache", cacheRoot + "/spinalsim")

  /** Where nicsim keeps built RTL: NICSIM_CACHE, else ~/.cache/nicsim. */
  private[rtl] def cacheRoot: String = sys.env.getOrElse("NICSIM_CACHE", sys.props("user.home") + "/.cache/nicsim")

  def config(wave: Boolean): SpinalSimConfig = {
    val c = SimConfig.workspacePath(workspace).cachePath(cache)
    if (wave) c.withVcdWave else c
  }

  /** A compiled block, ready to run any number of simulations. */
  final class Compiled private[RtlRunner] (val name: String, sim: SimCompiled[Component]) {
    /**
     * Runs `body` against a fresh instance: clock started (period 10 sim units), reset held for
     * 5 edges with every input at 0, then released; `body` starts just after that edge.
     */
    def run(testName: String, seed: Int, body: Consumer[RtlHandle]): Unit = sim.doSim(testName, seed) { dut =>
      val ios: Map[String, BaseType] = dut.getAllIo.toSeq.map(s => s.getName() -> s).toMap
      val inputs = dut.getAllIo.toSeq.filter(_.isInput)
      for (s <- inputs if s != dut.clockDomain.clock && s != dut.clockDomain.reset) s match {
        case b: Bool => b #= false
        case v: BitVector => v #= 0
        case _ =>
      }
      dut.clockDomain.forkStimulus(10)
      dut.clockDomain.waitSampling(5)
      sleep(1)
      var edges = 0L
      def port(name: String): BaseType =
        ios.getOrElse(name, throw new IllegalArgumentException(
          s"RTL block $name has no port '$name' (has ${ios.keys.toSeq.sorted.mkString(", ")})"))
      body.accept(new RtlHandle {
        override def poke(name: String, value: Long): Unit = port(name) match {
          case b: Bool => b #= value != 0
          case v: BitVector => v #= BigInt(java.lang.Long.toUnsignedString(value))
          case other =>
            throw new IllegalArgumentException(s"cannot drive $name of type ${other.getClass.getSimpleName}")
        }
        override def peek(name: String): Long = port(name) match {
          case b: Bool => if (b.toBoolean) 1L else 0L
          case v: BitVector => v.toBigInt.longValue
          case other => throw new IllegalArgumentException(s"cannot read $name of type ${other.getClass.getSimpleName}")
        }
        override def settle(): Unit = sleep(1)
        override def clockEdge(): Unit = { dut.clockDomain.waitSampling(); sleep(1); edges += 1 }
        override def ports(): java.util.List[String] = ios.keys.toSeq.sorted.asJava
        override def cycle(): Long = edges
      })
    }
  }

  private val compiledCache = mutable.Map[(String, Boolean), Compiled]()

  /** Compiles `make` under its definition name (once per JVM for a name and wave setting). */
  def compile(name: String, make: Supplier[Component], wave: Boolean): Compiled = synchronized {
    Toolchain.requireRtl()
    compiledCache.getOrElseUpdate((name, wave),
      new Compiled(name, config(wave).compile(make.get()).asInstanceOf[SimCompiled[Component]]))
  }
}
