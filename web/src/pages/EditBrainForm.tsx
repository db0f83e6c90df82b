import { useEffect, useState } from 'preact/hooks';
import {
  type BrainA,
  type BrainB,
  ApiError,
  apiWithEtag,
  asError,
  etagRevision,
  formErrors,
} from '../api';
import { FieldError, NameOptions, useAtlasesAndCategories } from '../components';

/** A write that lost to another one in between (a stale If-Match: 409; HTTP's own word for it: 412). */
const isConflict = (error: unknown) =>
  error instanceof ApiError && (error.status === 409 || error.status === 412);

interface Values {
  name: string;
  description: string;
  atlas: string;
  category: string;
  website: string;
  extra_link: string;
}

/**
 * Edits a brain's descriptive fields in place (its uploader, editors and staff): a PUT of every
 * field with If-Match, the ETag of the brain as it was read when the form opened, so a change made
 * in between (another tab, another person) is refused and said, never silently overwritten.
 * `onSaved` gets the revision the PUT made, for the page to wait until the read side shows it.
 */
export function EditBrainForm({
  brain,
  onSaved,
  onCancel,
  onReload,
}: {
  brain: BrainA;
  onSaved: (revision: number | undefined) => void;
  onCancel: () => void;
  /** Reads the brain again (the form opens anew on what it is now). */
  onReload: () => void;
}) {
  const [read, setRead] = useState<{ detail: BrainB; etag: string | null }>();
  const { atlases, categories } = useAtlasesAndCategories();
  const [values, setValues] = useState<Values>({
    name: brain.name,
    description: brain.description,
    atlas: brain.atlas?.name ?? '',
    category: brain.species?.category?.name ?? '',
    website: '',
    extra_link: '',
  });
  const [error, setError] = useState<ApiError | Error>();
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    let live = true;
    void apiWithEtag<BrainB>(`/api/brains/${brain.id}/?shape=b`, { cache: 'no-store' }).then(
      ({ body, etag }) => {
        if (!live) return;
        setRead({ detail: body, etag });
        setValues((v) => ({ ...v, website: body.website, extra_link: body.extra_link }));
      },
      (e: unknown) => live && setError(asError(e)),
    );
    return () => {
      live = false;
    };
  }, [brain.id]);

  const conflict = isConflict(error);
  const { field, general } = formErrors(conflict ? undefined : error);
  const set = (name: keyof Values) => (event: { currentTarget: { value: string } }) =>
    setValues({ ...values, [name]: event.currentTarget.value });
  const input = (name: keyof Values, label: string, type: 'text' | 'url' = 'text') => (
    <>
      <label for={`edit-${name}`}>{label}</label>
      <input
        id={`edit-${name}`}
        type={type}
        value={values[name]}
        onInput={set(name)}
        aria-invalid={field(name) ? 'true' : undefined}
        aria-describedby={`edit-${name}-error`}
        {...(name === 'atlas' || name === 'category'
          ? { list: `edit-${name}-options`, autocomplete: 'off' }
          : {})}
        required={name === 'name'}
      />
      <FieldError id={`edit-${name}-error`} message={field(name)} />
    </>
  );

  return (
    <form
      class="form edit"
      aria-label="Edit brain"
      onSubmit={(event) =>
        void (async () => {
          event.preventDefault();
          if (!read) return;
          setError(undefined);
          setSaving(true);
          const atlas = values.atlas.trim();
          const known = atlases.find((a) => a.name === atlas);
          const category = values.category.trim();
          const body: Record<string, unknown> = {
            name: values.name,
            description: values.description,
            // The API takes an atlas's id or slug; a name it does not know is sent as typed (400 on atlas).
            atlas: atlas ? (known?.id ?? atlas) : null,
            is_reference: read.detail.is_reference,
            website: values.website.trim(),
            extra_link: values.extra_link.trim(),
          };
          // With an atlas, the category is the atlas's; without one, it is the one chosen (by id).
          const knownCategory = categories.find((c) => c.name === category);
          if (!atlas && category) body.category = knownCategory?.id ?? category;
          if (brain.color) body.color = brain.color;
          try {
            const saved = await apiWithEtag<BrainB>(`/api/brains/${brain.id}/`, {
              method: 'PUT',
              json: body,
              headers: read.etag ? { 'If-Match': read.etag } : {},
            });
            onSaved(etagRevision(saved.etag));
          } catch (e) {
            setError(asError(e));
          } finally {
            setSaving(false);
          }
        })()
      }
    >
      <h2>Edit brain</h2>
      {conflict && (
        <div class="error" role="alert">
          <p>
            This brain was changed meanwhile (by someone else or in another tab); nothing was saved. Load its
            current fields, then make your change again.
          </p>
          <button type="button" class="secondary" onClick={onReload}>
            Load the current version
          </button>
        </div>
      )}
      {general && (
        <p class="error" role="alert">
          {general}
        </p>
      )}
      {input('name', 'Name')}
      <label for="edit-description">Description</label>
      <textarea
        id="edit-description"
        rows={3}
        value={values.description}
        onInput={set('description')}
        aria-describedby="edit-description-error"
      />
      <FieldError id="edit-description-error" message={field('description')} />
      {input('atlas', 'Atlas')}
      <NameOptions id="edit-atlas-options" names={atlases} />
      {input('category', 'Category')}
      <NameOptions id="edit-category-options" names={categories} />
      {input('website', 'Website', 'url')}
      {input('extra_link', 'Link', 'url')}
      <div class="actions">
        <button type="submit" disabled={!read || saving}>
          {saving ? 'Saving…' : 'Save'}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
