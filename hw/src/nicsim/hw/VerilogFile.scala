package nicsim.hw

import java.io.{OutputStream, PrintStream}
import java.nio.file.Path
import java.util.function.Supplier
import spinal.core._

/** One block's Verilog, written for tools outside the simulation (Yosys: `nicsim hw cost`). */
object VerilogFile {
  /** Writes the block `make` builds into `dir`, SpinalHDL kept quiet; returns its top module's name. */
  def write(make: Supplier[Component], dir: Path): String =
    Console.withOut(new PrintStream(OutputStream.nullOutputStream())) {
      SpinalConfig(targetDirectory = dir.toString).generateVerilog(make.get()).toplevelName
    }
}
