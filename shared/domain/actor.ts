/** Who issues a command, as the deciders need it: permissions are decided, not assumed. */
export interface Actor {
  readonly userId: number;
  readonly isStaff: boolean;
}
