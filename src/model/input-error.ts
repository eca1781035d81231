/**
 * Bad input that is not a world fault (a bad parameter, an unknown scene, a scene too large for
 * the machine or for a solver's arithmetic): one line for the user, exit status 2 on the command
 * line. A leaf module, so that scenes, limits and loaders can all throw it.
 */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}
