package nicsim.cosim.cli;

import java.util.Iterator;
import java.util.concurrent.Callable;
import nicsim.profile.Profile;
import nicsim.profile.Profiles;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "profiles", mixinStandardHelpOptions = true,
        description = "List the built-in profiles, or show every parameter of one (a name or a profile file).")
final class ProfilesCommand implements Callable<Integer> {
    @Parameters(arity = "0..1", paramLabel = "PROFILE",
            description = "built-in name (${COMPLETION-CANDIDATES}) or a .profile file",
            completionCandidates = Builtins.class)
    String profile;

    static final class Builtins implements Iterable<String> {
        @Override public Iterator<String> iterator() { return Profiles.BUILTIN.iterator(); }
    }

    @Override public Integer call() {
        if (profile == null) {
            for (String n : Profiles.BUILTIN) {
                Profile p = Profiles.load(n);
                System.out.printf("%-12s %s%n", n + (n.equals(Profiles.DEFAULT) ? "*" : ""), p.description());
            }
            System.out.println("(* default)  'nicsim profiles NAME' shows every parameter with its unit and source.");
        } else {
            Profiles.load(profile).print(System.out);
        }
        return 0;
    }
}
