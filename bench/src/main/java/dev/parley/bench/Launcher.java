package dev.parley.bench;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts another JVM running this suite's main class (the measured fork, the open-streams client). */
final class Launcher {
    private Launcher() {
    }

    /** {@code java <jvmArgs> (-jar <this jar> | -cp <classpath> BenchMain) <args>}, with this JVM's java. */
    static List<String> command(List<String> jvmArgs, List<String> args) {
        return command(currentJava(), jvmArgs, args);
    }

    /** The same with the given java executable (see {@link #java(String)}). */
    static List<String> command(String java, List<String> jvmArgs, List<String> args) {
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

    /** The java executable of the launching JVM. */
    static String currentJava() {
        return ProcessHandle.current().info().command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
    }

    /**
     * The java executable {@code --java} names: a JDK or JRE home (its {@code bin/java}) or the executable itself.
     *
     * @throws IllegalArgumentException if there is no executable file there
     */
    static String java(String path) {
        Path given = Path.of(path);
        Path java = Files.isDirectory(given) ? given.resolve("bin").resolve("java") : given;
        if (!Files.isRegularFile(java) || !Files.isExecutable(java)) {
            throw new IllegalArgumentException("--java " + path + ": no java executable at " + java
                    + " (give a JDK home or its bin/java)");
        }
        return java.toString();
    }
}
