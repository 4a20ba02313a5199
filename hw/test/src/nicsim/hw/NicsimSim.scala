package nicsim.hw

import java.nio.file.{Path, Paths}
import spinal.core.sim._

/**
 * SpinalSim settings shared by every RTL test. The workspace is an absolute path outside Mill's
 * per-run sandbox, and Verilated models are cached under ~/.cache/nicsim keyed by a hash of their
 * Verilog (SpinalSim's own cache), so a second run of an unchanged block starts in seconds.
 */
object NicsimSim {
  val workspace: String = sys.props.getOrElse("sim.workspace", Paths.get("simWorkspace").toAbsolutePath.toString)
  val cache: String = sys.env.getOrElse("NICSIM_CACHE", sys.props("user.home") + "/.cache/nicsim") + "/spinalsim"

  def config: SpinalSimConfig = SimConfig.workspacePath(workspace).cachePath(cache).withVcdWave

  /** Where SpinalSim writes the VCD of one test. */
  def wave(toplevel: String, testName: String): Path = Paths.get(workspace, toplevel, testName, "wave.vcd")
}
