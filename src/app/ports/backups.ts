/** Where scheduled backups go (the store's data-dir-backup.ts on a folder of the file system). */
export interface BackupFolders {
  /** Writes a consistent copy of the data directory as `folder`, which exists only once the copy is whole. */
  write(folder: string): Promise<void>;
  /** The folders there, backups or not. */
  list(): Promise<string[]>;
  remove(folder: string): Promise<void>;
}
