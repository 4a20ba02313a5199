package nicsim.cosim.cli;

import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import picocli.CommandLine.Option;

/** The {@code --profile} option every simulating command takes (a picocli mixin). */
final class ProfileOption {
    @Option(names = "--profile", defaultValue = Profiles.DEFAULT,
            description = "profile: a built-in name (lanai43, lanai72, cx-gen3x16) or a .profile file (default: ${DEFAULT-VALUE})")
    String profile = Profiles.DEFAULT;

    Profile load() { return Profiles.load(profile); }
}
