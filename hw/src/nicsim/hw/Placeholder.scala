package nicsim.hw
object Placeholder
