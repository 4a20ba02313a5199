package nicsim.cosim.cli;

import java.util.ArrayList;
import java.util.List;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import picocli.CommandLine.Option;

/** The {@code --profile} option every simulating command takes (a picocli mixin). */
final class ProfileOption {
    @Option(names = "--profile", defaultValue = Profiles.DEFAULT,
            description = "profile: a built-in name (lanai43, lanai72, cx-gen3x16) or a .profile file "
                    + "(default: ${DEFAULT-VALUE})")
    String profile = Profiles.DEFAULT;

    @Option(names = "--set", paramLabel = "KEY=VALUE",
            description = "override a parameter of the profile, keeping its unit's kind (e.g. --set dma.channels=4 "
                    + "--set pci.link.latency=\"250 ns\"); repeatable")
    List<String> overrides = new ArrayList<>();

    /** The profile, with every {@code --set} applied in order. */
    Profile load() {
        Profile p = Profiles.load(profile);
        for (String o : overrides) {
            int eq = o.indexOf('=');
            if (eq <= 0)
                throw new IllegalArgumentException("--set '" + o + "': expected KEY=VALUE, e.g. dma.channels=4");
            p = p.with(o.substring(0, eq).strip(), o.substring(eq + 1).strip());
        }
        return p;
    }
}
