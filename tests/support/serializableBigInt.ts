/**
 * Jest workers send failures to the parent as JSON; a failed assertion on an event (bigint
 * revisions and positions) would otherwise surface as "Do not know how to serialize a BigInt",
 * hiding the real failure. Tests only: the service never JSON-serialises bigints.
 */
(BigInt.prototype as unknown as { toJSON(): string }).toJSON = function (this: bigint) {
  return `${this.toString()}n`;
};
