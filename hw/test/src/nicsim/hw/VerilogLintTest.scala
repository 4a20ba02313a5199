package nicsim.hw

import java.nio.file.{Files, Paths}
import scala.sys.process._
import org.scalatest.funsuite.AnyFunSuite
import spinal.core._

/**
 * Every block's generated Verilog passes `verilator --lint-only -Wall`, with only the justified waivers of
 * hw/lint/waivers.vlt.
 */
class VerilogLintTest extends AnyFunSuite {
  val root = Paths.get(sys.props.getOrElse("nicsim.root", "."))
  val waivers = root.resolve("hw/lint/waivers.vlt")

  for ((name, make) <- GenerateVerilog.blocks) test(s"$name Verilog is lint-clean under verilator -Wall") {
    val dir = Files.createTempDirectory("lint-" + name)
    VerilogFile.config(dir.toString).generateVerilog(make())
    val file = dir.resolve(s"$name.v")
    assert(Files.exists(file), s"no $file")
    val out = new StringBuilder
    val code = Seq("verilator", "--lint-only", "-Wall", waivers.toString, file.toString, "--top-module", name) !
      ProcessLogger(l => out.append(l).append('\n'), l => out.append(l).append('\n'))
    assert(code == 0, s"verilator lint of $name:\n$out")
  }
}
