package nicsim.hw

import java.nio.file.{Path, Paths}
import spinal.core.sim._
import nicsim.hw.rtl.RtlRunner

/** SpinalSim settings for the RTL tests: RtlRunner's workspace and model cache, with waveforms on. */
object NicsimSim {
  def config: SpinalSimConfig = RtlRunner.config(true)

  /** Where SpinalSim writes the VCD of one test. */
  def wave(toplevel: String, testName: String): Path = Paths.get(RtlRunner.workspace, toplevel, testName, "wave.vcd")
}
