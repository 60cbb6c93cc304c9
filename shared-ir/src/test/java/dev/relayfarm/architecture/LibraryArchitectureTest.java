package dev.relayfarm.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The compiler library's structure (ARCHITECTURE.md section 3), checked on its compiled classes: every package is a
 * layer over the ones it imports (no cycles, so each can be understood and tested from the bottom up), and nothing
 * of the tools or the farm leaks in — services, tuner workers and agents depend on the library, never the reverse.
 */
class LibraryArchitectureTest {
    private static JavaClasses library;

    @BeforeAll
    static void importLibrary() {
        library = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.relayfarm");
    }

    @Test
    void noPackageCycles() {
        // every package is its own slice: ops and ops.nn count as two, so the registry may not import its families
        // while they import it
        slices().matching("dev.relayfarm.(**)").should().beFreeOfCycles().check(library);
    }

    @Test
    void noToolOrFarmFrameworksInTheLibrary() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "org.apache.kafka..", "picocli..",
                "ai.onnxruntime..", "jakarta.servlet..", "org.postgresql..").check(library);
    }

    @Test
    void theToolsAreNotInTheLibrary() {
        noClasses().should().resideInAnyPackage("dev.relayfarm.cli..", "dev.relayfarm.bench..", "dev.relayfarm.conformance..").check(library);
    }

    @Test
    void layersTheIssueNames() {
        // the artifact format sits below the compiler that writes it and the runtime that reads it
        noClasses().that().resideInAPackage("dev.relayfarm.artifact..").should().dependOnClassesThat()
                .resideInAnyPackage("dev.relayfarm.compile..", "dev.relayfarm.runtime..", "dev.relayfarm.kernel..", "dev.relayfarm.pipeline..")
                .check(library);
        noClasses().that().resideInAPackage("dev.relayfarm.runtime..").should().dependOnClassesThat().resideInAPackage("dev.relayfarm.compile..")
                .check(library);
        noClasses().that().resideInAPackage("dev.relayfarm.kernel..").should().dependOnClassesThat().resideInAPackage("dev.relayfarm.runtime..")
                .check(library);
        // compiling takes a module, wherever it came from; only the pipeline facade knows about importers
        noClasses().that().resideInAnyPackage("dev.relayfarm.compile..", "dev.relayfarm.kernel..", "dev.relayfarm.passes..", "dev.relayfarm.runtime..")
                .should().dependOnClassesThat().resideInAPackage("dev.relayfarm.frontend..").check(library);
    }
}
