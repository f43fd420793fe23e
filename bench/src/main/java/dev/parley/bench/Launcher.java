package dev.parley.bench;

import java.io.File;
import java.util.ArrayList;
import java.util.List;

/** Starts another JVM running this suite's main class (the measured fork, the open-streams client). */
final class Launcher {
    private Launcher() {
    }

    /** {@code java <jvmArgs> (-jar <this jar> | -cp <classpath> BenchMain) <args>}. */
    static List<String> command(List<String> jvmArgs, List<String> args) {
        String java = ProcessHandle.current().info().command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        String classPath = System.getProperty("java.class.path");
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(jvmArgs);
        if (!classPath.contains(File.pathSeparator) && classPath.endsWith(".jar")) {
            command.add("-jar");
            command.add(classPath);
        } else {
            command.add("-cp");
            command.add(classPath);
            command.add(BenchMain.class.getName());
        }
        command.addAll(args);
        return command;
    }
}
