package nicsim.cosim;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import nicsim.driver.DeviceManual;
import nicsim.profile.Profiles;
import org.junit.jupiter.api.Test;

/** docs/blocks.md's port tables are the twins' ports now, for every block. */
class BlockContractsTest {
    @Test
    void theContractTablesAreTheTwinsPorts() throws Exception {
        Path page = Path.of(System.getProperty("nicsim.root", ".")).resolve("docs/blocks.md");
        String text = Files.readString(page);
        var sections = BlockContracts.sections(Profiles.load("cx-gen3x16"));
        assertEquals(sections.keySet().stream().sorted().toList(),
                DeviceManual.blocks(text).stream().sorted().toList());
        assertEquals(DeviceManual.render(text, sections), text, "docs/blocks.md differs from the twins: "
                + "./mill cosim.runMain nicsim.cosim.BlockContracts docs/blocks.md");
    }
}
