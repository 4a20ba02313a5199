package nicsim.host;

import static org.junit.jupiter.api.Assertions.*;

import nicsim.profile.Profiles;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The PCIe model follows TLP arithmetic (docs/sources.md#pcie-tlp-arithmetic): payload / (payload + 24 B) for posted
 * writes.
 */
class PcieEfficiencyTest {
    @ParameterizedTest
    @CsvSource({"128, 0.842", "256, 0.914", "512, 0.955"})
    void dmaWriteEfficiencyMatchesTlpArithmetic(int mps, double expected) {
        PcieEfficiency.Result r = PcieEfficiency.measureWrite(Profiles.load("cx-gen3x16"), mps, 1 << 20);
        assertEquals((double) mps / (mps + 24), r.efficiency(), 1e-9);
        assertEquals(expected, r.efficiency(), 0.0005);
        assertEquals((1 << 20) / mps, r.tlps());
        // throughput = efficiency x Gen3 x16 raw rate (126.03 Gb/s), to within a picosecond of rounding per TLP
        assertEquals(expected * 126.03, r.gbps(), 0.1);
    }
}
