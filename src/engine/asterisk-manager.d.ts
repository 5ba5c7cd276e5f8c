// Types for the parts of asterisk-manager 0.2 (plain CommonJS, no typings) that pbxctl uses.
declare module "asterisk-manager" {
  /** One parsed AMI message: lower-cased keys; a key sent several times becomes an array. */
  export type AmiMessage = Record<string, string | string[] | Record<string, string> | undefined>;

  export interface AmiManager {
    connect(port: number, host: string, callback?: (err: Error | null) => void): void;
    login(callback?: (err?: AmiMessage) => void): void;
    action(
      action: Record<string, string | number | undefined>,
      callback?: (err: AmiMessage | undefined, response: AmiMessage) => void,
    ): string;
    disconnect(callback?: () => void): void;
    isConnected(): boolean;
    on(event: string, listener: (...args: never[]) => void): void;
    removeListener(event: string, listener: (...args: never[]) => void): void;
    removeAllListeners(event?: string): void;
    options: { port: number; host: string; username: string; password: string; events: boolean };
  }

  interface ManagerConstructor {
    new (
      port?: number,
      host?: string,
      username?: string,
      password?: string,
      events?: boolean,
    ): AmiManager;
  }

  const Manager: ManagerConstructor;
  export default Manager;
}
