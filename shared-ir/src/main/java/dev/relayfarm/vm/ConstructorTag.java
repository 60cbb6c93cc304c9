package dev.relayfarm.vm;

/**
 * What the executable keeps of an ADT constructor: the run time knows only {@code tag} and the field
 * count; the names are for printing results and for mapping them back to the module's constructors.
 */
public record ConstructorTag(String adt, String constructor, int tag, int arity) {}
